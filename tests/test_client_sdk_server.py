"""The client against a server built on the official MCP SDK, as third parties deploy them."""

from __future__ import annotations

import itertools
from typing import Any

from client_fixtures import serve
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http import EventCallback, EventId, EventStore, StreamId
from mcp.types import JSONRPCMessage
from starlette.responses import JSONResponse

from pipelines.ces.client import CesMcpClient
from pipelines.ces.retry import RetryPolicy
from pipelines.config import CesSettings

APP = "projects/p/locations/us/apps/a"
CONVERSATION = {"name": f"{APP}/conversations/c1", "startTime": "2026-11-01T10:00:00Z", "turns": []}


class MemoryEventStore(EventStore):
    """What resumable SDK servers keep: every event of every stream, for replay after a reconnect."""

    def __init__(self) -> None:
        self.events: list[tuple[StreamId, EventId, JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self._ids))
        self.events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        return None


def sdk_server() -> MCPServer:
    server = MCPServer("ces-like")

    @server.tool()
    def list_conversations(parent: str, pageSize: int = 100) -> dict[str, Any]:
        """Conversations of an app."""
        return {"conversations": [CONVERSATION] if parent == APP else []}

    return server


def session_era_only(app: Any) -> Any:
    """The SDK app as a server of the session era answers a stateless request: HTTP 400."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or ())
        if scope["type"] == "http" and headers.get(b"mcp-protocol-version") == b"2026-07-28":
            response = JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32600, "message": "Bad Request: Missing session ID"},
                },
                status_code=400,
            )
            await response(scope, receive, send)
            return
        await app(scope, receive, send)

    return asgi


def test_a_resumable_sdk_server_priming_its_sse_streams_is_read_without_a_retry() -> None:
    """Such a server opens every SSE answer with an event of an id and empty data; that event
    carries no message: the client skips it, reads the response, and sends nothing twice."""
    store = MemoryEventStore()
    app = session_era_only(sdk_server().streamable_http_app(event_store=store))
    with serve(app, lifespan="on") as base:
        settings = CesSettings(mcp_url=f"{base}/mcp", max_rps=1000)
        with CesMcpClient(settings, retry_policy=RetryPolicy(max_attempts=3)) as client:
            page = client.call_tool("list_conversations", {"parent": APP, "pageSize": 10})
            stats = client.stats
    assert page == {"conversations": [CONVERSATION]}
    assert stats.retries == 0 and stats.session_initializations == 1
    assert any(message is None for _, _, message in store.events)  # it did prime its streams
