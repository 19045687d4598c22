"""An MCP request on the wire, stateless (2026-07-28) or of the session era. A strict stateless
server rejects routing headers that disagree with `params._meta`, so both are built here, as the
official MCP SDK builds them; session-era servers ignore them, or ask for `initialize`."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from pipelines import __version__
from pipelines.ces.errors import CesProtocolError, CesToolError

MODERN_PROTOCOL_VERSION = "2026-07-28"
HANDSHAKE_PROTOCOL_VERSION = "2025-11-25"
"""The newest version negotiable with `initialize`, offered when a server wants a session."""
HANDSHAKE_PROTOCOL_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})

CLIENT_NAME = "ces-pipeline"

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"

PROTOCOL_VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
SESSION_ID_HEADER = "mcp-session-id"
PARAM_HEADER_PREFIX = "Mcp-Param-"
X_MCP_HEADER_KEY = "x-mcp-header"

UNSUPPORTED_PROTOCOL_VERSION = -32022
"""JSON-RPC error code of a server that does not speak the requested protocol version."""
HEADER_MISMATCH = -32020
"""JSON-RPC error code of a 2026-07-28 server whose routing headers disagree with the body."""

_MAX_MESSAGE_CHARS = 2000
_HEADER_SAFE = re.compile(r"[\x20-\x7e]*")
_B64_SENTINEL = re.compile(r"=\?base64\?.*\?=")

CLIENT_INFO: dict[str, str] = {"name": CLIENT_NAME, "version": __version__}


def encode_header_value(value: str) -> str:
    """Header-safe form of `value`: printable ASCII verbatim, anything else base64-wrapped."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _B64_SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def modern_meta() -> dict[str, Any]:
    """The per-request `params._meta` envelope of protocol 2026-07-28."""
    return {
        PROTOCOL_VERSION_META_KEY: MODERN_PROTOCOL_VERSION,
        CLIENT_INFO_META_KEY: dict(CLIENT_INFO),
        CLIENT_CAPABILITIES_META_KEY: {},
    }


def modern_headers(method: str, params: Mapping[str, Any]) -> dict[str, str]:
    """Routing headers a 2026-07-28 server compares against the body."""
    headers = {PROTOCOL_VERSION_HEADER: MODERN_PROTOCOL_VERSION, METHOD_HEADER: method}
    name = params.get("name") if method == "tools/call" else None
    if isinstance(name, str):
        headers[NAME_HEADER] = encode_header_value(name)
    return headers


def _annotated_properties(schema: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(property path, header token) for each `x-mcp-header` reachable through `properties` only."""
    if not isinstance(schema, Mapping):
        return
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for name, sub in properties.items():
        if not isinstance(sub, Mapping):
            continue
        token = sub.get(X_MCP_HEADER_KEY)
        if isinstance(token, str) and sub.get("type") in ("string", "integer", "boolean"):
            yield (*path, name), token
        yield from _annotated_properties(sub, (*path, name))


def param_headers(input_schema: Any, arguments: Mapping[str, Any]) -> dict[str, str]:
    """`Mcp-Param-*` headers mirroring the arguments a tool's input schema marks with `x-mcp-header`."""
    headers: dict[str, str] = {}
    for path, token in _annotated_properties(input_schema):
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(value, bool):
            value = "true" if value else "false"
        if isinstance(value, str | int | float):
            headers[f"{PARAM_HEADER_PREFIX}{token}"] = encode_header_value(str(value))
    return headers


def initialize_params() -> dict[str, Any]:
    return {
        "protocolVersion": HANDSHAKE_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": dict(CLIENT_INFO),
    }


def _text_items(result: Mapping[str, Any]) -> list[str]:
    content = result.get("content")
    if not isinstance(content, list):
        return []
    return [
        item["text"]
        for item in content
        if isinstance(item, Mapping) and item.get("type") == "text" and isinstance(item.get("text"), str)
    ]


def tool_result_payload(tool: str, result: Any) -> dict[str, Any]:
    """The tool's output object: `structuredContent`, else the JSON of the text content items."""
    if not isinstance(result, Mapping):
        raise CesProtocolError(f"{tool}: the tools/call result is not an object")
    texts = _text_items(result)
    if result.get("isError") is True:
        message = "".join(texts).strip() or "the server gave no message"
        raise CesToolError(tool, message[:_MAX_MESSAGE_CHARS], result.get("structuredContent"))
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return structured
    if not texts:
        raise CesProtocolError(f"{tool} returned neither structuredContent nor text content")
    text = "".join(texts)
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise CesProtocolError(f"{tool} returned text that is not JSON: {text[:200]!r}") from None
    if not isinstance(payload, dict):
        raise CesProtocolError(f"{tool} returned JSON that is not an object: {text[:200]!r}")
    return payload
