"""Typed failures of the CES MCP source. Messages carry the server's words, never credentials."""

from __future__ import annotations

from typing import Any


class CesError(Exception):
    """Base class for every failure talking to the CES MCP server."""


class CesTransportError(CesError):
    """The HTTP exchange failed: connection, timeout, unexpected status or a broken stream."""

    def __init__(self, message: str, *, status_code: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


class CesProtocolError(CesError):
    """The server answered with something that is not valid JSON-RPC / MCP."""


class CesRpcError(CesError):
    """A JSON-RPC error object (protocol-level failure)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.server_message = message
        self.data = data


class CesToolError(CesError):
    """A tool result with `isError: true` (tool-level failure)."""

    def __init__(self, tool: str, message: str):
        super().__init__(f"{tool} failed: {message}")
        self.tool = tool
        self.server_message = message


class CesPagingError(CesError):
    """Paging went wrong, e.g. the server handed out the same page token twice."""
