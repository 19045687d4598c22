"""A synchronous CES MCP client (JSON-RPC 2.0 over Streamable HTTP), stateless as Google documents
its remote servers (protocol 2026-07-28); a session-era server that asks for a session gets one,
re-opened once when it expires. `_request` negotiates, `_send` alone retries (and renews
credentials after an HTTP 401), `_post` is one paced, counted attempt. An SSE answer is left at its
response event (a server may keep the stream open). Thread-safe; never logs or repeats the token."""

from __future__ import annotations

import functools
import itertools
import logging
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Self

import httpx

from pipelines import stop
from pipelines.ces import protocol
from pipelines.ces.answers import (
    CountingBody,
    Exchange,
    Reply,
    Session,
    build_exchange,
    read_answer,
    redact,
    wants_handshake,
)
from pipelines.ces.auth import TokenProvider, token_provider_from_settings
from pipelines.ces.errors import (
    CesError,
    CesPagingError,
    CesProtocolError,
    CesRpcError,
    CesTransportError,
)
from pipelines.ces.ratelimit import RateLimiter, rate_limiter_for
from pipelines.ces.retry import RetryPolicy
from pipelines.config import CesSettings

__all__ = ["CesMcpClient", "ClientStats", "RetryPolicy"]

logger = logging.getLogger("pipelines.ces.client")


_READ_ONLY_PREFIXES = ("get_", "list_")


@dataclass
class ClientStats:
    """Counters of one client; `requests` counts every HTTP exchange, handshakes and re-sends too."""

    requests: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    bytes_received: int = 0
    api_seconds: float = 0.0
    retries: int = 0
    retry_seconds: float = 0.0
    credential_refreshes: int = 0
    session_initializations: int = 0


@dataclass
class _Attempt:
    """The token the latest attempt sent (kept here only: never in an exception, log or record)."""

    token: str | None = None


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process: it parses ~150 CA certificates."""
    return httpx.create_ssl_context()


class CesMcpClient:
    """Calls CES MCP tools. Use as a context manager; share one instance between threads."""

    def __init__(
        self,
        settings: CesSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        rate_limiter: RateLimiter | None = None,
        token_provider: TokenProvider | None = None,
        retry_policy: RetryPolicy | None = None,
    ):
        self._url = settings.mcp_url
        self._quota_project = settings.quota_project
        timeout = httpx.Timeout(settings.timeout_seconds, connect=settings.connect_timeout_seconds)
        self._http = httpx.Client(
            transport=transport,
            verify=tls_context(),
            timeout=timeout,
            follow_redirects=False,
            headers={"user-agent": f"{protocol.CLIENT_NAME}/{protocol.CLIENT_INFO['version']}"},
        )
        self._owns_limiter = rate_limiter is None
        self._limiter = rate_limiter or rate_limiter_for(
            settings.max_rps, settings.rate_limit_file, settings.rate_limit_postgres
        )
        self._tokens = token_provider or token_provider_from_settings(settings)
        self._retry_policy = retry_policy or RetryPolicy(
            max_attempts=settings.max_attempts,
            max_seconds=settings.retry_max_seconds,
            initial_backoff_seconds=settings.retry_backoff_seconds,
            quota_seconds=settings.quota_retry_seconds,
        )
        self._max_body_bytes = settings.max_response_mb * 2**20
        self._deadline_seconds = settings.request_deadline_seconds
        self._lock = threading.Lock()
        self._session_lock = threading.Lock()
        self._session: Session | None = None
        self._ids = itertools.count(1)
        self._stats = ClientStats()
        self._tools: dict[str, dict[str, Any]] | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Anything but an error (Ctrl-C's KeyboardInterrupt, Dagster's interruption) is a stop.
        self.close(stopping=exc_type is not None and not issubclass(exc_type, Exception))

    def close(self, *, stopping: bool = False) -> None:
        session, self._session = self._session, None
        # On a stop, the session is left to expire: ending it is a request that could be slow too.
        if (
            session is not None
            and session.session_id
            and not self._http.is_closed
            and not (stopping or stop.requested.is_set())
        ):
            self._terminate(session)
        self._http.close()
        if self._owns_limiter:
            self._limiter.close()

    def __repr__(self) -> str:
        mode = "stateless" if self._session is None else f"session protocol {self._session.protocol_version}"
        return f"CesMcpClient(url={self._url!r}, {mode}, auth={self._tokens!r})"

    @property
    def stats(self) -> ClientStats:
        with self._lock:
            return replace(self._stats, tool_calls=dict(self._stats.tool_calls))

    # -- tools -------------------------------------------------------------------------------

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server offers (following `nextCursor`); refreshes the tool cache."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = self._request("tools/list", {"cursor": cursor} if cursor else {}, idempotent=True)
            page = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise CesProtocolError("tools/list result has no tools array")
            tools.extend(tool for tool in page if isinstance(tool, dict))
            cursor = result.get("nextCursor")
            if not cursor:
                break
            if cursor in seen:
                raise CesPagingError(f"tools/list returned the cursor {cursor!r} twice")
            seen.add(cursor)
        self._tools = {tool["name"]: tool for tool in tools if isinstance(tool.get("name"), str)}
        return tools

    def has_tool(self, name: str) -> bool:
        """Whether the server offers `name` (its tools are listed once per client)."""
        if self._tools is None:
            self.list_tools()
        return bool(self._listed(name))

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, idempotent: bool | None = None
    ) -> dict[str, Any]:
        """A tool's output; `idempotent` (resend?) defaults to `idempotentHint`, else `get_*`/`list_*`."""
        if idempotent is None:
            annotations = self._listed(name).get("annotations")
            hint = annotations.get("idempotentHint") if isinstance(annotations, dict) else None
            idempotent = hint if isinstance(hint, bool) else name.startswith(_READ_ONLY_PREFIXES)
        with self._lock:
            self._stats.tool_calls[name] = self._stats.tool_calls.get(name, 0) + 1
        params = {"name": name, "arguments": dict(arguments or {})}
        return self._request("tools/call", params, idempotent=idempotent, tool=name)

    def _listed(self, tool: str) -> dict[str, Any]:
        """What `tools/list` said of `tool` (empty before the tools are listed)."""
        return (self._tools or {}).get(tool) or {}

    # -- one JSON-RPC call -------------------------------------------------------------------

    def _request(
        self, method: str, params: dict[str, Any], *, idempotent: bool, tool: str | None = None
    ) -> Any:
        """Send; if the server names what it needs first, provide it and resend once (it refused unread)."""
        session = self._session
        try:
            return self._send(self._build(method, params, session, tool), idempotent=idempotent).result
        except (CesTransportError, CesRpcError) as exc:
            if session is None and wants_handshake(exc):
                logger.info("%s asks for an MCP session; falling back to the initialize handshake", self._url)
                session = self._open_session(stale=None)
            elif session is not None and session.session_id and getattr(exc, "status_code", None) == 404:
                logger.info("MCP session expired (HTTP 404); initialising a new one")
                session = self._open_session(stale=session)
            elif self._needs_tool_schemas(exc, tool):
                logger.info("%s wants Mcp-Param headers for %s; listing tools to learn them", self._url, tool)
                self.list_tools()
            else:
                raise
        return self._send(self._build(method, params, session, tool), idempotent=idempotent).result

    def _needs_tool_schemas(self, error: CesError, tool: str | None) -> bool:
        code = error.code if isinstance(error, CesRpcError) else getattr(error, "rpc_code", None)
        unknown = self._tools is None
        return tool is not None and code == protocol.HEADER_MISMATCH and unknown and self._session is None

    def _build(
        self, method: str, params: dict[str, Any] | None, session: Session | None, tool: str | None = None
    ) -> Exchange:
        request_id = None
        if not method.startswith("notifications/"):
            with self._lock:
                request_id = next(self._ids)
        schema = self._listed(tool).get("inputSchema") if tool is not None else None
        return build_exchange(method, params, request_id, session, tool, schema)

    # -- sessions (for servers of the session era) -------------------------------------------

    def _open_session(self, *, stale: Session | None) -> Session:
        """Run the handshake, unless another thread already replaced `stale` meanwhile."""
        with self._session_lock:
            current = self._session
            if current is not stale and current is not None:
                return current
            reply = self._send(self._build("initialize", protocol.initialize_params(), None), idempotent=True)
            version = reply.result.get("protocolVersion") if isinstance(reply.result, dict) else None
            session = Session(
                version if isinstance(version, str) else protocol.HANDSHAKE_PROTOCOL_VERSION, reply.session_id
            )
            self._send(self._build("notifications/initialized", None, session), idempotent=True)
            self._session = session
            with self._lock:
                self._stats.session_initializations += 1
            logger.info(
                "MCP session initialised (protocol %s, %s)",
                session.protocol_version,
                "with a session id" if session.session_id else "no session id",
            )
            return session

    def _terminate(self, session: Session) -> None:
        """Best effort: the session would expire anyway."""
        headers = {
            protocol.SESSION_ID_HEADER: session.session_id or "",
            protocol.PROTOCOL_VERSION_HEADER: session.protocol_version,
        }
        try:
            headers.update(self._auth_headers()[0])
            self._limiter.acquire()
            response = self._http.delete(self._url, headers=headers)
            logger.debug("DELETE session status=%s", response.status_code)
        except (httpx.HTTPError, CesError) as exc:
            logger.debug("ending the MCP session failed: %s", type(exc).__name__)

    # -- the exchange and its retries ----------------------------------------------------------

    def _send(self, exchange: Exchange, *, idempotent: bool) -> Reply:
        """The one place that resends: by the policy, and once after a 401 (refused unread), token renewed."""
        attempt = _Attempt()
        try:
            return self._send_with_retries(exchange, attempt, idempotent=idempotent)
        except CesTransportError as exc:
            if exc.status_code != 401 or not getattr(self._tokens, "can_refresh", True):
                raise
            logger.info("%s: HTTP 401; renewing the access token and sending once more", exchange.label)
            self._tokens.force_refresh(attempt.token)
            with self._lock:
                self._stats.credential_refreshes += 1
        return self._send_with_retries(exchange, attempt, idempotent=idempotent)

    def _send_with_retries(self, exchange: Exchange, attempt: _Attempt, *, idempotent: bool) -> Reply:
        def count(_error: BaseException, _failed_attempt: int, delay: float) -> None:
            with self._lock:
                self._stats.retries += 1
                self._stats.retry_seconds += delay

        def post() -> Reply:
            """A tool call's reply is its output: a failed tool result raises here, where the policy
            resends it if it failed transiently (UNAVAILABLE, ...)."""
            reply = self._post(exchange, attempt)
            if exchange.tool is None:
                return reply
            return reply._replace(result=protocol.tool_result_payload(exchange.tool, reply.result))

        return self._retry_policy.run(
            post,
            idempotent=idempotent,
            label=exchange.label,
            on_retry=count,
        )

    def _auth_headers(self) -> tuple[dict[str, str], str | None]:
        token = self._tokens.token()
        headers = {"authorization": f"Bearer {token}"} if token else {}
        quota_project = self._quota_project or self._tokens.quota_project()
        if quota_project:
            headers["x-goog-user-project"] = quota_project
        return headers, token

    def _post(self, exchange: Exchange, attempt: _Attempt) -> Reply:
        self._limiter.acquire()
        auth, token = self._auth_headers()
        attempt.token = token
        status: int | None = None
        body: CountingBody | None = None
        started = time.perf_counter()
        deadline_started = time.monotonic()
        try:
            request = self._http.build_request(
                "POST", self._url, content=exchange.body, headers={**exchange.headers, **auth}
            )
            response = self._http.send(request, stream=True)
            try:
                status = response.status_code
                body = CountingBody(
                    response,
                    exchange.label,
                    deadline_started + self._deadline_seconds,
                    self._deadline_seconds,
                )
                return read_answer(exchange, response, body, token, max_body_bytes=self._max_body_bytes)
            finally:
                response.close()
        # httpx's own messages may quote a header (h11 refuses an illegal value with it), so
        # they are redacted, and the original exception is not chained: it would carry the
        # token into tracebacks and Dagster's run storage.
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            # The request never left this machine: safe to send again, whatever the call.
            raise CesTransportError(
                f"{exchange.label}: could not connect to {self._url} ({type(exc).__name__}: "
                f"{redact(str(exc), token)})",
                request_sent=False,
            ) from None
        except httpx.TimeoutException as exc:
            raise CesTransportError(
                f"{exchange.label}: {self._url} timed out ({type(exc).__name__})"
            ) from None
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            raise CesError(
                f"{exchange.label}: cannot send to {self._url}: {redact(str(exc), token)}"
            ) from None
        except httpx.HTTPError as exc:
            raise CesTransportError(
                f"{exchange.label}: request to {self._url} failed: {redact(str(exc), token)}"
            ) from None
        finally:
            elapsed = time.perf_counter() - started
            received = body.total if body is not None else 0
            with self._lock:
                self._stats.requests += 1
                self._stats.api_seconds += elapsed
                self._stats.bytes_received += received
            logger.debug(
                "POST %s status=%s elapsed=%.3fs bytes=%d", exchange.label, status, elapsed, received
            )
