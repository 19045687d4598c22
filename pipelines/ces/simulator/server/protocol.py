"""MCP on top of JSON-RPC: the handshake era and the stateless 2026-07-28 era, and tools/call.

Two kinds of client reach this server:

* handshake era (protocol versions up to 2025-11-25): `initialize`, then `notifications/initialized`,
  then requests carrying `MCP-Protocol-Version: <negotiated>` (and `Mcp-Session-Id` when the server
  hands one out). A bare request without any MCP header is served the same way, statelessly.
* modern era (2026-07-28, what Google documents for its remote MCP servers): no handshake; every
  request is self-contained. The MCP Python SDK probes with `server/discover`, then stamps each
  request with `MCP-Protocol-Version`, `Mcp-Method` and (tools/call) `Mcp-Name` headers and
  `params._meta` holding the protocol version, client info and client capabilities. The server
  checks that envelope (-32602 when incomplete, -32020 when headers and body disagree, -32022 for
  an unsupported version) and answers with `resultType` and a `serverInfo` stamp in `_meta`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from pipelines.ces.simulator.server.errors import ToolError
from pipelines.ces.simulator.server.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    RpcError,
    RpcMessage,
)
from pipelines.ces.simulator.server.tools import ToolBox
from pipelines.protojson import deepjson

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "ces-simulator", "title": "CES MCP simulator", "version": "1.0.0"}
INSTRUCTIONS = "Simulated Customer Engagement Suite (CES) MCP server with synthetic data."
_CAPABILITIES = {"tools": {"listChanged": False}, "logging": {}}
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _decode_header_value(value: str | None) -> str | None:
    """Undo the SDK's `=?base64?...?=` wrapping of header values that are not plain ASCII."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _reject(code: int, message: str, data: Any = None) -> RpcError:
    """An envelope rejection: always HTTP 400, whatever the era would otherwise use."""
    return RpcError(code, message, data=data, http_status=400)


def modern_version(message: RpcMessage, headers: Mapping[str, str]) -> str | None:
    """The 2026-07-28-era version a request speaks, after checking its envelope; None for the handshake era.

    As in the SDK's own server, the `MCP-Protocol-Version` header routes: absent or a handshake
    version means handshake era; anything else is checked as a per-request envelope.
    """
    header = headers.get("mcp-protocol-version")
    if header is None or header in HANDSHAKE_VERSIONS:
        return None
    meta = message.params.get("_meta")
    if not isinstance(meta, dict):
        raise _reject(
            INVALID_PARAMS,
            f"params._meta must be an object carrying {PROTOCOL_VERSION_META!r} and "
            f"{CLIENT_CAPABILITIES_META!r}",
        )
    missing = [key for key in (PROTOCOL_VERSION_META, CLIENT_CAPABILITIES_META) if key not in meta]
    if missing:
        raise _reject(
            INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {', '.join(missing)}"
        )
    version = meta[PROTOCOL_VERSION_META]
    if header != version:
        raise _reject(
            HEADER_MISMATCH, "mcp-protocol-version header does not match the request envelope's version"
        )
    if headers.get("mcp-method") != message.method:
        raise _reject(HEADER_MISMATCH, "mcp-method header does not match the request body's method")
    tool = message.params.get("name") if message.method == "tools/call" else None
    if tool is not None and _decode_header_value(headers.get("mcp-name")) != tool:
        raise _reject(HEADER_MISMATCH, "mcp-name header does not match the request body's tool name")
    if version not in MODERN_VERSIONS:
        raise _reject(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(MODERN_VERSIONS), "requested": version},
        )
    return version


@dataclass(frozen=True)
class Outcome:
    """The result of one request, serialised, plus any notification to send ahead of it on SSE."""

    result: bytes
    notifications: tuple[tuple[str, dict[str, Any]], ...]


class McpProtocol:
    def __init__(self, tools: ToolBox):
        self.tools = tools

    def handle(self, message: RpcMessage, modern: str | None) -> Outcome:
        """Answer one request; raises RpcError for protocol failures (the caller picks the HTTP status)."""
        result: dict[str, Any]
        if message.method == "initialize":
            requested = message.params.get("protocolVersion")
            result = {
                "protocolVersion": requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                "capabilities": _CAPABILITIES,
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
            }
        elif message.method == "server/discover":
            result = {
                "supportedVersions": list(MODERN_VERSIONS),
                "capabilities": _CAPABILITIES,
                "instructions": INSTRUCTIONS,
                "ttlMs": 0,
                "cacheScope": "public",
            }
        elif message.method == "ping":
            result = {}
        elif message.method == "tools/list":
            result = {"tools": self.tools.definitions()}
            if modern:
                result.update(ttlMs=300_000, cacheScope="public")
        elif message.method == "tools/call":
            return Outcome(self._call_tool(message, modern), self._notifications(message, modern))
        else:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {message.method}")
        if modern or message.method == "server/discover":
            result.update(resultType="complete", _meta={SERVER_INFO_META: SERVER_INFO})
        return Outcome(orjson.dumps(result), self._notifications(message, modern))

    def _call_tool(self, message: RpcMessage, modern: str | None) -> bytes:
        name = message.params.get("name")
        arguments = message.params.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise RpcError(
                INVALID_PARAMS, "tools/call needs params.name (string) and params.arguments (object)"
            )
        handler = self.tools.handler(name)
        if handler is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        envelope: dict[str, Any]
        try:
            structured = deepjson.dumps(handler(arguments))  # traces may nest past orjson's limit
        except ToolError as error:
            envelope = {"content": [{"type": "text", "text": str(error)}], "isError": True}
        else:
            envelope = {"content": [{"type": "text", "text": structured.decode()}]}
            if self.tools.config.structured_content:
                envelope["structuredContent"] = orjson.Fragment(structured)
        if modern:
            envelope.update(resultType="complete", _meta={SERVER_INFO_META: SERVER_INFO})
        return orjson.dumps(envelope)

    @staticmethod
    def _notifications(message: RpcMessage, modern: str | None) -> tuple[tuple[str, dict[str, Any]], ...]:
        """What precedes the response on an SSE stream: progress if the caller asked for it, else a log line.

        In the modern era log messages go only to requests that opted in with a log level in `_meta`.
        """
        meta = message.params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        token = meta.get("progressToken")
        if isinstance(token, str | int) and not isinstance(token, bool):
            return (
                (
                    "notifications/progress",
                    {
                        "progressToken": token,
                        "progress": 0,
                        "total": 1,
                        "message": f"{message.method} accepted",
                    },
                ),
            )
        level = meta.get(LOG_LEVEL_META)
        if not modern or (level in _LOG_LEVELS and _LOG_LEVELS.index(level) <= _LOG_LEVELS.index("info")):
            return (
                (
                    "notifications/message",
                    {"level": "info", "logger": "ces-simulator", "data": f"handling {message.method}"},
                ),
            )
        return ()
