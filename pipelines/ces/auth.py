"""Where the bearer token of a CES request comes from, first match wins: `CES_ACCESS_TOKEN`;
Google Application Default Credentials, over https only (a loopback simulator never receives a
real token); else no Authorization header (fine for the simulator)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from pipelines.ces.errors import CesAuthError
from pipelines.config import CesSettings

logger = logging.getLogger("pipelines.ces.auth")

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
SIGN_IN = (
    "Set CES_ACCESS_TOKEN (e.g. to `gcloud auth print-access-token`), or sign in with "
    "`gcloud auth application-default login`"
)
"""How to give CES credentials: said where none were found and where CES refused them."""

AdcLoader = Callable[[], tuple[Any, str | None]]
"""Returns (credentials, project id) like `google.auth.default`; raises when ADC is absent."""


class TokenProvider(Protocol):
    """What the client asks for on every request. Implementations must be thread-safe."""

    def token(self) -> str | None:
        """A currently valid bearer token, or None to send no Authorization header."""
        ...

    def quota_project(self) -> str | None:
        """The project the credentials themselves bill quota to, if they name one."""
        ...

    def force_refresh(self, rejected_token: str | None = None) -> None:
        """Renew the token now (after an HTTP 401), unless it changed since `rejected_token`."""
        ...

    @property
    def can_refresh(self) -> bool:
        """Whether `force_refresh` can yield a different token (if not, a 401 is final)."""
        ...


class StaticTokenProvider:
    """A token the user supplied (None: no Authorization header); a 401 with it is final."""

    can_refresh = False

    def __init__(self, token: str | None):
        self._token = token

    def token(self) -> str | None:
        return self._token

    def quota_project(self) -> str | None:
        return None

    def force_refresh(self, rejected_token: str | None = None) -> None:
        """Nothing to renew."""

    def __repr__(self) -> str:
        return f"StaticTokenProvider(token={'***' if self._token else None})"


class GoogleCredentialsProvider:
    """Tokens from google-auth credentials, refreshed when missing or about to expire."""

    def __init__(self, credentials: Any):
        from google.auth.transport.requests import Request  # `requests` comes with Dagster

        self._credentials = credentials
        self._request = Request()
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        from google.auth.exceptions import GoogleAuthError

        try:
            self._credentials.refresh(self._request)
        except GoogleAuthError as exc:
            raise CesAuthError(f"could not obtain a Google access token: {exc}") from exc
        logger.debug("refreshed Google credentials (%s)", type(self._credentials).__name__)

    def token(self) -> str | None:
        with self._lock:
            if not self._credentials.valid:
                self._refresh()
            return self._credentials.token

    def quota_project(self) -> str | None:
        return getattr(self._credentials, "quota_project_id", None)

    def force_refresh(self, rejected_token: str | None = None) -> None:
        with self._lock:
            if rejected_token is None or rejected_token == self._credentials.token:
                self._refresh()

    can_refresh = True

    def __repr__(self) -> str:
        return f"GoogleCredentialsProvider({type(self._credentials).__name__})"


def _load_adc(adc_loader: AdcLoader | None) -> tuple[Any | None, str]:
    """(credentials, why they are unavailable); credentials are None when ADC cannot be used."""
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError:
        return None, "google-auth is not installed"
    try:
        credentials, _project = (
            adc_loader() if adc_loader else google.auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
        )
    except DefaultCredentialsError as exc:
        return None, f"no Application Default Credentials ({exc})"
    return credentials, ""


def token_provider_from_settings(
    settings: CesSettings, *, adc_loader: AdcLoader | None = None
) -> TokenProvider:
    """The first usable source of the chain described in the module docstring."""
    if settings.access_token:
        return StaticTokenProvider(settings.access_token)
    if not settings.mcp_url.lower().startswith("https://"):
        reason = "Google credentials are only sent over https"
        logger.info(
            "CES requests to %s are unauthenticated: no CES_ACCESS_TOKEN; %s", settings.mcp_url, reason
        )
        return StaticTokenProvider(None)
    credentials, reason = _load_adc(adc_loader)
    if credentials is not None:
        logger.debug("authenticating CES requests with Application Default Credentials")
        return GoogleCredentialsProvider(credentials)
    # a real service refuses unauthenticated requests: say so before it does
    logger.warning(
        "CES requests to %s go out unauthenticated: no CES_ACCESS_TOKEN; %s. %s",
        settings.mcp_url,
        reason,
        SIGN_IN,
    )
    return StaticTokenProvider(None)
