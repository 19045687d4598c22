"""JSON-RPC 2.0 envelopes: parsing one inbound message and serialising replies.

Replies are assembled from pre-serialised pieces (orjson) so that a large tool result is
serialised once, and so the SSE framing can split a reply across several `data:` lines at
points that are outside any JSON string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
MODERN_HTTP_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""HTTP status of a JSON-RPC error in the 2026-07-28 era; the handshake era answers errors with 200."""


class RpcError(Exception):
    """A JSON-RPC error reply, with the HTTP status it travels under."""

    def __init__(self, code: int, message: str, *, data: Any = None, http_status: int = 200):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status


@dataclass(frozen=True)
class RpcMessage:
    """One inbound request (with `id`) or notification (without)."""

    method: str
    params: dict[str, Any]
    id: str | int | None
    is_notification: bool


def parse_message(body: bytes) -> RpcMessage:
    """Decode a POST body holding one JSON-RPC request or notification (batches are not accepted)."""
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise RpcError(PARSE_ERROR, "Parse error", http_status=400) from None
    if (
        not isinstance(decoded, dict)
        or decoded.get("jsonrpc") != "2.0"
        or not isinstance(decoded.get("method"), str)
    ):
        raise RpcError(
            INVALID_REQUEST, "Invalid Request: expected one JSON-RPC 2.0 request object", http_status=400
        )
    request_id = decoded.get("id")
    is_notification = "id" not in decoded
    if not is_notification and (isinstance(request_id, bool) or not isinstance(request_id, str | int)):
        raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer", http_status=400)
    params = decoded.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(INVALID_REQUEST, "Invalid Request: params must be an object", http_status=400)
    return RpcMessage(decoded["method"], params, request_id, is_notification)


def reply_lines(request_id: str | int | None, result: bytes) -> tuple[bytes, bytes, bytes]:
    """A success reply as three pieces whose concatenation (with or without newlines) is valid JSON."""
    return b'{"jsonrpc":"2.0","id":' + orjson.dumps(request_id) + b",", b'"result":' + result, b"}"


def error_body(request_id: str | int | None, error: RpcError) -> bytes:
    payload: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        payload["data"] = error.data
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": payload})


def notification_body(method: str, params: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params})
