"""The token chain: static token, Application Default Credentials, or none.

The ADC path runs google-auth for real: a service-account key file made here, found through
GOOGLE_APPLICATION_CREDENTIALS, whose token endpoint is a small server on loopback.
"""

from __future__ import annotations

import logging
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from client_fixtures import fast_limiter, mcp_server, rpc_result, serve, settings_for, tool_result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth.exceptions import DefaultCredentialsError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pipelines.ces.auth import (
    GoogleCredentialsProvider,
    StaticTokenProvider,
    token_provider_from_settings,
)
from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesAuthError
from pipelines.config import CesSettings

HTTPS_URL = "https://ces.googleapis.com/mcp"


class TokenEndpoint:
    """An OAuth 2 token endpoint issuing adc-token-1, adc-token-2, ... (or refusing)."""

    def __init__(self) -> None:
        self.grants: list[dict[str, str]] = []
        self.refuse = False
        self._lock = threading.Lock()

    async def token(self, request: Request) -> JSONResponse:
        form = dict(urllib.parse.parse_qsl((await request.body()).decode()))
        with self._lock:
            self.grants.append(form)
            issued = len(self.grants)
        if self.refuse:
            return JSONResponse(
                {"error": "invalid_grant", "error_description": "key revoked"}, status_code=400
            )
        return JSONResponse(
            {"access_token": f"adc-token-{issued}", "expires_in": 3600, "token_type": "Bearer"}
        )


@pytest.fixture
def token_endpoint() -> Iterator[tuple[TokenEndpoint, str]]:
    endpoint = TokenEndpoint()
    with serve(Starlette(routes=[Route("/token", endpoint.token, methods=["POST"])])) as base:
        yield endpoint, f"{base}/token"


@pytest.fixture
def adc_file(
    tmp_path: Path, token_endpoint: tuple[TokenEndpoint, str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A service-account key as ADC, through GOOGLE_APPLICATION_CREDENTIALS."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    info = {
        "type": "service_account",
        "project_id": "test-project",
        "private_key_id": "k1",
        "private_key": pem.decode(),
        "client_email": "ingest@test-project.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_endpoint[1],
    }
    path = tmp_path / "adc.json"
    path.write_bytes(orjson.dumps(info))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("GOOGLE_CLOUD_QUOTA_PROJECT", "adc-quota-project")
    return path


def no_adc() -> tuple[Any, str | None]:
    raise DefaultCredentialsError("Your default credentials were not found.")


def test_static_token_comes_first_and_is_never_shown() -> None:
    provider = token_provider_from_settings(
        CesSettings(mcp_url=HTTPS_URL, access_token="s3cret"), adc_loader=no_adc
    )
    assert isinstance(provider, StaticTokenProvider)
    assert provider.token() == "s3cret"
    provider.force_refresh("s3cret")  # nothing to renew
    assert provider.token() == "s3cret"
    assert "s3cret" not in repr(provider)


def test_plain_http_endpoints_get_no_google_credentials(caplog: pytest.LogCaptureFixture) -> None:
    def loader() -> tuple[Any, str | None]:
        raise AssertionError("ADC must not even be looked up for a plain-http endpoint")

    caplog.set_level(logging.INFO, logger="pipelines.ces.auth")
    provider = token_provider_from_settings(CesSettings(mcp_url="http://127.0.0.1:1/mcp"), adc_loader=loader)
    assert isinstance(provider, StaticTokenProvider) and provider.token() is None
    assert ["unauthenticated" in r.getMessage() and "https" in r.getMessage() for r in caplog.records] == [
        True
    ]


def test_no_adc_means_unauthenticated_with_one_warning_saying_how_to_sign_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="pipelines.ces.auth")
    provider = token_provider_from_settings(CesSettings(mcp_url=HTTPS_URL), adc_loader=no_adc)
    assert isinstance(provider, StaticTokenProvider) and provider.token() is None
    (record,) = caplog.records
    said = record.getMessage()
    assert record.levelno == logging.WARNING and "not found" in said and "unauthenticated" in said
    assert "CES_ACCESS_TOKEN" in said and "gcloud auth application-default login" in said


def test_without_google_auth_requests_are_unauthenticated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.auth.exceptions", None)  # as if google-auth were not installed
    provider = token_provider_from_settings(CesSettings(mcp_url=HTTPS_URL))
    assert isinstance(provider, StaticTokenProvider) and provider.token() is None


def test_adc_tokens_are_fetched_cached_and_renewed_on_demand(
    adc_file: Path, token_endpoint: tuple[TokenEndpoint, str]
) -> None:
    endpoint, _ = token_endpoint
    provider = token_provider_from_settings(CesSettings(mcp_url=HTTPS_URL))
    assert isinstance(provider, GoogleCredentialsProvider)
    assert provider.token() == "adc-token-1"
    assert provider.token() == "adc-token-1"  # still valid: no new grant
    assert provider.quota_project() == "adc-quota-project"
    (grant,) = endpoint.grants
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    provider.force_refresh("adc-token-1")
    assert provider.token() == "adc-token-2"
    provider.force_refresh("adc-token-1")  # another thread already renewed the rejected token
    assert provider.token() == "adc-token-2"
    provider.force_refresh()
    assert provider.token() == "adc-token-3"


def test_concurrent_first_use_refreshes_once(
    adc_file: Path, token_endpoint: tuple[TokenEndpoint, str]
) -> None:
    provider = token_provider_from_settings(CesSettings(mcp_url=HTTPS_URL))
    tokens: list[str | None] = []
    threads = [threading.Thread(target=lambda: tokens.append(provider.token())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tokens == ["adc-token-1"] * 8
    assert len(token_endpoint[0].grants) == 1


def test_a_refused_refresh_is_an_auth_error(
    adc_file: Path, token_endpoint: tuple[TokenEndpoint, str]
) -> None:
    token_endpoint[0].refuse = True
    provider = token_provider_from_settings(CesSettings(mcp_url=HTTPS_URL))
    with pytest.raises(CesAuthError, match="invalid_grant"):
        provider.token()


@pytest.mark.parametrize(("quota_setting", "expected"), [(None, "adc-quota-project"), ("billing", "billing")])
def test_client_sends_adc_token_and_quota_project(
    adc_file: Path, quota_setting: str | None, expected: str
) -> None:
    provider = token_provider_from_settings(CesSettings(mcp_url=HTTPS_URL))
    with mcp_server(lambda call: rpc_result(call, tool_result({}))) as (server, url):
        settings = settings_for(url, quota_project=quota_setting)
        with CesMcpClient(settings, rate_limiter=fast_limiter(), token_provider=provider) as client:
            client.call_tool("get_conversation", {"name": "c"})
    headers = server.calls[0].headers
    assert headers["authorization"] == "Bearer adc-token-1"
    assert headers["x-goog-user-project"] == expected
