"""One HTTP answer of the MCP server (a JSON body, or an SSE stream whose response may follow
notifications) read as its JSON-RPC response, or why there is none. Every message bound for a
log or an exception passes `redact` first: a server may echo the token it refused."""

from __future__ import annotations

import email.utils
import html
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import httpx
import orjson

from pipelines.ces import protocol
from pipelines.ces.auth import SIGN_IN
from pipelines.ces.errors import (
    CesError,
    CesMalformedResponseError,
    CesProtocolError,
    CesRpcError,
    CesTransportError,
)
from pipelines.ces.sse import SseEvent, SseFormatError, parse_sse
from pipelines.protojson import deepjson

logger = logging.getLogger("pipelines.ces.client")

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"

_ERROR_BODY_LIMIT = 64 * 1024
_MESSAGE_LIMIT = 500
_SESSION_REQUIRED = re.compile(r"session|not initiali[sz]ed", re.IGNORECASE)
_UNSUPPORTED_VERSION = re.compile(r"unsupported protocol version", re.IGNORECASE)


class Session(NamedTuple):
    """What the `initialize` handshake of a session-era server negotiated (`session_id` None: the
    server keeps no session)."""

    protocol_version: str
    session_id: str | None


@dataclass(frozen=True)
class Exchange:
    """One JSON-RPC message ready to POST; `request_id` is None for a notification."""

    method: str
    tool: str | None
    request_id: int | None
    body: bytes
    headers: dict[str, str]

    @property
    def label(self) -> str:
        return f"{self.method} {self.tool}" if self.tool else self.method


def build_exchange(
    method: str,
    params: dict[str, Any] | None,
    request_id: int | None,
    session: Session | None,
    tool: str | None = None,
    input_schema: Any = None,
) -> Exchange:
    """One JSON-RPC message as it is POSTed: stateless, its protocol metadata in `_meta` and in
    headers with the tool's `Mcp-Param` headers (from its `input_schema`), or within a session's
    protocol version and id; the handshake itself carries its version in the body."""
    headers = {"content-type": JSON_TYPE, "accept": f"{JSON_TYPE}, {SSE_TYPE}"}
    if method == "initialize":
        pass
    elif session is None:
        params = {**(params or {}), "_meta": protocol.modern_meta()}
        headers.update(protocol.modern_headers(method, params))
        if tool is not None:
            headers.update(protocol.param_headers(input_schema, params.get("arguments") or {}))
    else:
        headers[protocol.PROTOCOL_VERSION_HEADER] = session.protocol_version
        if session.session_id:
            headers[protocol.SESSION_ID_HEADER] = session.session_id
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if request_id is not None:
        message["id"] = request_id
    return Exchange(method, tool, request_id, orjson.dumps(message), headers)


class Reply(NamedTuple):
    result: Any
    session_id: str | None


class CountingBody:
    """A response body, read once and counted, until `deadline` (monotonic): a read timeout misses a drip."""

    def __init__(self, response: httpx.Response, label: str, deadline: float, deadline_seconds: float):
        self._chunks = response.iter_bytes()
        self.url = response.url
        self.total = 0
        self._label, self._deadline, self._deadline_seconds = label, deadline, deadline_seconds

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            self.total += len(chunk)
            if time.monotonic() > self._deadline:
                raise CesTransportError(
                    f"{self._label}: the answer from {self.url} took longer than "
                    f"{self._deadline_seconds:g} s (CES_REQUEST_DEADLINE_SECONDS) after {self.total} bytes"
                )
            yield chunk

    def read(self, limit: int | None = None) -> bytes:
        parts: list[bytes] = []
        size = 0
        for chunk in self:
            parts.append(chunk)
            size += len(chunk)
            if limit is not None and size >= limit:
                break
        return b"".join(parts)


def _event_json(event: SseEvent) -> Any:
    """An SSE event's JSON; data not valid UTF-8 is read as the spec decodes it (U+FFFD) before giving up."""
    try:
        return deepjson.loads(event.payload)
    except orjson.JSONDecodeError:
        return deepjson.loads(event.data)


def _retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: either a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class _ErrorBody(NamedTuple):
    message: str | None
    rpc_code: int | None = None
    detail: Any = None
    """The JSON-RPC error's `data`, else the whole body parsed."""


def _error_details(body: bytes) -> _ErrorBody:
    """What an error body says: a JSON-RPC error, a Google API error, or plain text."""
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, str):
        return _ErrorBody(error[:_MESSAGE_LIMIT])
    if not isinstance(error, dict):
        return _ErrorBody(_plain_text(body.decode("utf-8", errors="replace"))[:_MESSAGE_LIMIT] or None)
    message = str(error.get("message") or "")
    if "jsonrpc" in parsed:
        code = error.get("code")
        data = error.get("data")
        return _ErrorBody(
            message[:_MESSAGE_LIMIT] or None,
            code if isinstance(code, int) else None,
            data if data is not None else parsed,
        )
    # Google API error: {"error": {"code": 403, "message": ..., "status": ..., "details": [{"reason": ...}]}}
    status = error.get("status")
    reasons = [d["reason"] for d in error.get("details") or () if isinstance(d, dict) and d.get("reason")]
    text = f"{status}: {message}" if status else message
    if reasons:
        text += f" (reason: {', '.join(map(str, reasons))})"
    return _ErrorBody(text[:_MESSAGE_LIMIT] or None, detail=parsed)


_UNSEEN_HTML = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_HTML_TAG = re.compile(r"<[^>]*>")


def _plain_text(text: str) -> str:
    """An error body as one line of what it says: a front end's or proxy's HTML error page (a
    wrong path, a 502) as its visible text, without its markup, styles or scripts."""
    if text.lstrip()[:1] == "<":
        text = html.unescape(_HTML_TAG.sub(" ", _UNSEEN_HTML.sub(" ", text)))
    return " ".join(text.split())


def _is_response_to(message: Any, request_id: int) -> bool:
    if not isinstance(message, dict) or ("result" not in message and "error" not in message):
        return False
    return message.get("id") == request_id or str(message.get("id")) == str(request_id)


def wants_handshake(error: CesError) -> bool:
    """Does this refusal mean "open a session"? HTTP 400 about a session, or -32022 (unknown version)."""
    if isinstance(error, CesRpcError):
        return error.code == protocol.UNSUPPORTED_PROTOCOL_VERSION and _offers_handshake(error.detail)
    if not isinstance(error, CesTransportError) or error.status_code != 400:
        return False
    if error.rpc_code == protocol.UNSUPPORTED_PROTOCOL_VERSION:
        return _offers_handshake(error.detail)
    message = error.server_message or ""
    return bool(_SESSION_REQUIRED.search(message) or _UNSUPPORTED_VERSION.search(message))


def _offers_handshake(data: Any) -> bool:
    """True unless the -32022 data lists supported versions and none is a handshake version."""
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return True
    return any(version in protocol.HANDSHAKE_PROTOCOL_VERSIONS for version in supported)


def read_answer(
    exchange: Exchange,
    response: httpx.Response,
    body: CountingBody,
    token: str | None,
    *,
    max_body_bytes: int,
) -> Reply:
    """The JSON-RPC result of an HTTP answer; anything else raises, with the server's words (redacted)."""
    status = response.status_code
    if status >= 300:
        raise _http_error(exchange, response, body.read(_ERROR_BODY_LIMIT), token)
    session_id = response.headers.get(protocol.SESSION_ID_HEADER)
    if exchange.request_id is None:
        return Reply(None, session_id)
    if status in (202, 204):
        raise CesProtocolError(f"{exchange.label}: the server answered HTTP {status} without a response")
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if content_type == JSON_TYPE:
        raw = body.read(max_body_bytes + 1)
        if len(raw) > max_body_bytes:
            raise CesProtocolError(
                f"{exchange.label}: the response body is larger than {max_body_bytes // 2**20} MB "
                "(CES_MAX_RESPONSE_MB); ask for smaller pages (CES_PAGE_SIZE) or raise the limit"
            )
        message = _json_response(exchange, raw)
    elif content_type == SSE_TYPE:
        message = _sse_response(exchange, body, max_body_bytes)
    else:
        raise CesProtocolError(f"{exchange.label}: unexpected content type {content_type or 'none'!r}")
    error = message.get("error")
    if error is not None:
        if not isinstance(error, dict):
            raise CesProtocolError(f"{exchange.label}: malformed JSON-RPC error {str(error)[:200]!r}")
        code = error.get("code")
        raise CesRpcError(
            code if isinstance(code, int) else 0,
            redact(str(error.get("message", "")), token),
            error.get("data"),
        )
    return Reply(message.get("result"), session_id)


def _json_response(exchange: Exchange, raw: bytes) -> dict[str, Any]:
    try:
        parsed = deepjson.loads(raw)
    except orjson.JSONDecodeError:
        raise CesMalformedResponseError(
            f"{exchange.label}: response body is not JSON ({len(raw)} bytes): {raw[:200]!r}"
        ) from None
    messages = parsed if isinstance(parsed, list) else [parsed]
    assert exchange.request_id is not None
    for message in messages:
        if _is_response_to(message, exchange.request_id):
            return message
    # A server that could not read the request id answers an error with `id: null`.
    if isinstance(parsed, dict) and parsed.get("id") is None and isinstance(parsed.get("error"), dict):
        return parsed
    if not any(isinstance(message, dict) and "jsonrpc" in message for message in messages):
        raise CesProtocolError(
            f"{exchange.label}: the answer is JSON but not JSON-RPC ({raw[:120]!r}): is CES_MCP_URL "
            "the endpoint of an MCP server?"
        )
    raise CesProtocolError(
        f"{exchange.label}: the JSON body holds no response to request {exchange.request_id}"
    )


def _sse_response(exchange: Exchange, body: CountingBody, max_event_bytes: int) -> dict[str, Any]:
    assert exchange.request_id is not None
    events = 0
    try:
        for event in parse_sse(body, max_event_bytes=max_event_bytes):
            events += 1
            if event.event != "message":
                continue
            try:
                message = _event_json(event)
            except orjson.JSONDecodeError:
                raise CesMalformedResponseError(
                    f"{exchange.label}: SSE event is not JSON: {event.data[:200]!r}"
                ) from None
            if _is_response_to(message, exchange.request_id):
                return message
            logger.debug(
                "skipping SSE message %s", message.get("method") if isinstance(message, dict) else ""
            )
    except SseFormatError as exc:
        limit = " (the limit is CES_MAX_RESPONSE_MB)" if "exceeds" in str(exc) else ""
        raise CesProtocolError(f"{exchange.label}: {exc}{limit}") from exc
    raise CesTransportError(
        f"{exchange.label}: the SSE stream from {body.url} ended after {events} event(s) "
        f"without a response to request {exchange.request_id}"
    )


def _http_error(
    exchange: Exchange, response: httpx.Response, raw: bytes, token: str | None
) -> CesTransportError:
    status = response.status_code
    if status < 400:
        location = response.headers.get("location", "")
        return CesTransportError(
            f"{exchange.label}: HTTP {status} redirect to {location!r} not followed; "
            "set CES_MCP_URL to the final endpoint",
            status_code=status,
        )
    details = _error_details(raw) if raw else _ErrorBody(None)
    server_message = redact(details.message, token) if details.message else None
    hint = ""
    if status == 401:
        hint = (
            f" ({'no credentials were sent' if token is None else 'CES refused the credentials'}. {SIGN_IN})"
        )
    return CesTransportError(
        f"{exchange.label}: HTTP {status} {response.reason_phrase} from {response.url}"
        + (f": {server_message}" if server_message else "")
        + hint,
        status_code=status,
        retry_after=_retry_after_seconds(response.headers.get("retry-after")),
        server_message=server_message,
        rpc_code=details.rpc_code,
        detail=details.detail,
    )


def redact(text: str, token: str | None) -> str:
    """The token, also as a library quotes a refused header (its bytes' repr), masked: servers may echo it."""
    if not token:
        return text
    for form in {token, token.strip(), repr(token)[1:-1], repr(token.encode())[2:-1]}:
        if form:
            text = text.replace(form, "***")
    return text
