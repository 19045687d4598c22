"""Small purpose-built MCP servers for the client tests, served for real by uvicorn on loopback.

`serve(app)` runs any ASGI app on 127.0.0.1 in a background thread. `McpServer` is a
starlette app that records every request (headers and JSON body) and answers through a
handler the test writes, so each test states exactly what the server does on the wire.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from pipelines.ces.ratelimit import RateLimiter
from pipelines.config import CesSettings


@contextmanager
def serve(app: Any, *, lifespan: str = "off") -> Iterator[str]:
    """Serve `app` on a free loopback port; yields the base URL `http://127.0.0.1:PORT`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan=lifespan, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@dataclass
class Call:
    """One request as the server saw it."""

    http_method: str
    headers: dict[str, str]
    body: Any
    port: int | None = None
    """The client's port: which connection the request came on."""

    @property
    def method(self) -> str | None:
        return self.body.get("method") if isinstance(self.body, dict) else None

    @property
    def id(self) -> Any:
        return self.body.get("id") if isinstance(self.body, dict) else None

    @property
    def params(self) -> dict[str, Any]:
        return (self.body or {}).get("params") or {}

    @property
    def tool(self) -> str | None:
        return self.params.get("name") if self.method == "tools/call" else None

    @property
    def arguments(self) -> dict[str, Any]:
        return self.params.get("arguments") or {}


Handler = Callable[[Call], Response]


@dataclass
class McpServer:
    """Records requests on /mcp and answers with `handler`."""

    handler: Handler
    calls: list[Call] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def _endpoint(self, request: Request) -> Response:
        raw = await request.body()
        port = request.client.port if request.client else None
        call = Call(request.method, dict(request.headers), orjson.loads(raw) if raw else None, port)
        with self._lock:
            self.calls.append(call)
        return self.handler(call)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/mcp", self._endpoint, methods=["POST", "DELETE"])])

    def tool_calls(self, tool: str | None = None) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == "tools/call" and (tool is None or c.tool == tool)]


@contextmanager
def mcp_server(handler: Handler) -> Iterator[tuple[McpServer, str]]:
    """An `McpServer` being served; yields it and its endpoint URL."""
    server = McpServer(handler)
    with serve(server.app()) as base:
        yield server, f"{base}/mcp"


def settings_for(url: str, **overrides: Any) -> CesSettings:
    """Settings for a test server: retries keep their real rules but back off for milliseconds."""
    return CesSettings(mcp_url=url, **{"retry_backoff_seconds": 0.005, **overrides})


def fast_limiter() -> RateLimiter:
    """A limiter that never holds a test back."""
    return RateLimiter(1_000_000)


# -- response builders -------------------------------------------------------------------------


def rpc_result(call: Call, result: Any, **headers: str) -> Response:
    body = orjson.dumps({"jsonrpc": "2.0", "id": call.id, "result": result})
    return Response(body, media_type="application/json", headers=headers)


def rpc_error(call: Call, code: int, message: str, data: Any = None, status: int = 200) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = orjson.dumps({"jsonrpc": "2.0", "id": call.id, "error": error})
    return Response(body, status_code=status, media_type="application/json")


def tool_result(payload: dict[str, Any], *, structured: bool = True) -> dict[str, Any]:
    """An MCP CallToolResult carrying `payload` as structured content and as its JSON text."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": orjson.dumps(payload).decode()}]}
    if structured:
        result["structuredContent"] = payload
    return result


def sse_response(chunks: Iterable[bytes | str], *, delay: float = 0.0, **headers: str) -> StreamingResponse:
    """An SSE body sent as the given chunks, optionally pausing between them."""

    async def body() -> Any:
        import asyncio

        for chunk in chunks:
            yield chunk.encode() if isinstance(chunk, str) else chunk
            if delay:
                await asyncio.sleep(delay)

    return StreamingResponse(body(), media_type="text/event-stream", headers=headers)


def sse_message(message: dict[str, Any], *, event_id: str | None = None) -> str:
    lines = [f"id: {event_id}"] if event_id else []
    lines.append(f"data: {orjson.dumps(message).decode()}")
    return "\n".join(lines) + "\n\n"


class ToolServer:
    """A handler serving tools from plain functions: `tools[name](arguments) -> output dict`.

    Tool calls answer in JSON with structured content; `tools/list` lists the tool names.
    """

    def __init__(self, tools: dict[str, Callable[[dict[str, Any]], dict[str, Any]]]):
        self.tools = tools

    def __call__(self, call: Call) -> Response:
        if call.method == "tools/list":
            listed = [{"name": name, "inputSchema": {"type": "object"}} for name in self.tools]
            return rpc_result(call, {"tools": listed})
        if call.method == "tools/call" and call.tool in self.tools:
            return rpc_result(call, tool_result(self.tools[call.tool](call.arguments)))
        return rpc_error(call, -32601, f"unknown method {call.method} {call.tool}")
