"""Typed failures of the CES MCP source. Messages carry the server's words, never credentials."""

from __future__ import annotations

import functools
from typing import Any

from pipelines.ces.google_status import GoogleStatus, google_status
from pipelines.errors import ActionableError


class CesError(ActionableError):
    """Base class for every failure talking to the CES MCP server; `attempts`: sends before it was final."""

    attempts: int = 1
    detail: Any = None
    """What the server sent beside its message, parsed: an HTTP error body, a JSON-RPC error's
    `data`, a failed tool result's `structuredContent`."""
    server_message: str | None = None

    @functools.cached_property
    def google(self) -> GoogleStatus:
        """The `google.rpc.Status` the server reported, from `detail` or else the message."""
        found = google_status(self.detail)
        return found if found.code or found.reasons else google_status(self.server_message or "")


class CesTransportError(CesError):
    """The HTTP exchange failed: connection, timeout, unexpected status or a broken stream.
    `request_sent` is False only when the connection could not be opened: that alone makes
    re-sending a non-idempotent call safe."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        server_message: str | None = None,
        rpc_code: int | None = None,
        request_sent: bool = True,
        detail: Any = None,
    ):
        super().__init__(message)
        self.detail = detail
        self.status_code = status_code
        self.retry_after = retry_after
        self.server_message = server_message
        self.rpc_code = rpc_code
        self.request_sent = request_sent


class CesAuthError(CesError):
    """Credentials exist but no token could be obtained (e.g. the refresh was refused)."""


class CesProtocolError(CesError):
    """The server answered with something that is not valid JSON-RPC / MCP."""


class CesMalformedResponseError(CesProtocolError):
    """A response body that does not parse (cut off or garbled on the way): worth sending again."""


class CesRpcError(CesError):
    """A JSON-RPC error object (protocol-level failure)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.server_message = message
        self.detail = data


class CesToolError(CesError):
    """A tool result with `isError: true` (tool-level failure)."""

    def __init__(self, tool: str, message: str, detail: Any = None):
        super().__init__(f"{tool} failed: {message}")
        self.tool = tool
        self.server_message = message
        self.detail = detail


class CesPagingError(CesError):
    """Paging went wrong, e.g. the server kept handing out the same page token."""


class CesDataError(CesError):
    """Stored API records cannot be replayed as they are, e.g. they are out of the fetch order."""
