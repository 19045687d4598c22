"""Tool-level failures, reported to the caller as `isError: true` results (not JSON-RPC errors)."""

from __future__ import annotations


class ToolError(Exception):
    """A failed tool call; the text the caller sees is "<STATUS>: <message>" (a google.rpc code name)."""

    def __init__(self, status: str, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
