"""The transport faults of `SimulatedFaults` (see faults.py): ASGI middleware around the MCP app.

The middleware reads each POST body, asks `SimulatedFaults.decide` which fault (if any) this
occurrence of the request meets, and then answers in its place, lets the app answer and alters
the answer, or drops the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipelines.ces.simulator.server.faults import (
    GOOGLE_KINDS,
    RPC_KINDS,
    STATUS_KINDS,
    TRANSPORT_KINDS,
    SimulatedFaults,
    request_key,
)

_GOOGLE_STATUS = {
    429: ("RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Read requests' (simulated fault)."),
    500: ("INTERNAL", "Internal error encountered (simulated fault)."),
    503: ("UNAVAILABLE", "The service is currently unavailable (simulated fault)."),
}
_PLAIN_STATUS = {502: "Bad Gateway", 504: "Gateway Timeout"}
_UNAVAILABLE_MESSAGE = _GOOGLE_STATUS[503][1]
_UNAVAILABLE_STATUS = {"code": 14, "message": _UNAVAILABLE_MESSAGE}
"""A `google.rpc.Status` UNAVAILABLE, as a JSON-RPC error's data or a tool result carries it."""
_DISABLED_MESSAGE = (
    "Customer Engagement Suite API has not been used in this project before or it is disabled. "
    "Enable it in the Cloud console, then retry (simulated fault)."
)
_PRIMING_EVENT = b"id: 0\ndata:\n\n"
_PAD_CHUNK = b" " * (1 << 20)


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None when the client went away first."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app the body already read, then waits on the real one."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _with_accept(scope: Scope, media_type: str) -> Scope:
    scope = dict(scope)
    headers = MutableHeaders(scope=scope)
    headers["accept"] = media_type
    return scope


async def _drop_connection(send: Send, *, reset: bool) -> bool:
    """Close the client's connection without a word (RST when `reset`); False if the server
    does not let us reach its transport (only uvicorn's is known)."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None:
        return False
    if reset:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    await asyncio.sleep(0)  # let the server notice the connection is gone before we return
    return True


def _json_rpc(body: bytes) -> dict[str, Any]:
    """The request as a JSON-RPC object, or {} when it is none (a batch, not JSON)."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    return message if isinstance(message, dict) else {}


def _applies(kind: str, message: dict[str, Any]) -> bool:
    """Whether fault `kind` can answer this request: an error reply needs a request id to answer,
    a tool error a tool call."""
    if kind == "rpc-error":
        return "id" in message
    if kind == "tool-error":
        return "id" in message and message.get("method") == "tools/call"
    return True


def _error_info(reason: str) -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
        "metadata": {"service": "ces.googleapis.com"},
    }


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


async def _body(send: Send, body: bytes, *, more: bool = False) -> None:
    await send({"type": "http.response.body", "body": body, "more_body": more})


async def _disconnected(receive: Receive) -> None:
    """Returns when the client has gone away (for answers that take long to send)."""
    while (await receive())["type"] != "http.disconnect":
        pass


@contextlib.asynccontextmanager
async def _watching(receive: Receive) -> AsyncIterator[asyncio.Task[None]]:
    """A task that ends when the client goes away, for as long as an answer is being sent."""
    gone = asyncio.create_task(_disconnected(receive))
    try:
        yield gone
    finally:
        gone.cancel()


class _Recorded:
    """A response captured whole from the app, to be sent back altered."""

    def __init__(self) -> None:
        self.start: Message | None = None
        self.body: list[bytes] = []

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.start = message
        elif message["type"] == "http.response.body":
            self.body.append(message.get("body", b""))

    def content_type(self) -> str:
        headers = dict(self.start["headers"]) if self.start else {}
        return headers.get(b"content-type", b"").decode("latin-1").partition(";")[0].strip()

    @property
    def ok(self) -> bool:
        return self.start is not None and self.start["status"] == 200


class FaultMiddleware:
    """Injects the transport faults of `faults` into the POST requests reaching `app`."""

    def __init__(self, app: ASGIApp, faults: SimulatedFaults):
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return
        receive = _replaying(body, receive)
        key = request_key(body)
        message = _json_rpc(body)
        kinds = [kind for kind in TRANSPORT_KINDS if _applies(kind, message)]
        kind = self.faults.decide("transport", kinds, key)
        if kind is None:
            await self.app(scope, receive, send)
        elif kind in STATUS_KINDS:
            await self._status(int(kind))(scope, receive, send)
        elif kind in (*GOOGLE_KINDS, "403-disabled"):
            await self._google(kind)(scope, receive, send)
        elif kind in RPC_KINDS:
            await self._rpc(kind, key, message)(scope, receive, send)
        elif kind == "reset":
            if not await _drop_connection(send, reset=True):
                raise ConnectionResetError("simulated connection reset")
        elif kind == "slow":
            await self._slow(scope, receive, send)
        elif kind == "drip":
            await self._drip(scope, receive, send)
        elif kind == "huge":
            await self._huge(kind, key, scope, receive, send)
        elif kind == "sse-priming":
            await self._primed(kind, key, scope, receive, send)
        else:
            await self._cut(kind, key, scope, receive, send)

    def _google(self, kind: str) -> Response:
        """Google's own error shapes: the canonical code in `status`, the why in `details`."""
        message = "simulated fault"
        if kind == "403-quota":
            status, reason = 403, "PERMISSION_DENIED"
            detail = _error_info("RATE_LIMIT_EXCEEDED")
        elif kind == "403-disabled":
            status, reason, message = 403, "PERMISSION_DENIED", _DISABLED_MESSAGE
            detail = _error_info("SERVICE_DISABLED")
        else:
            status, reason = 503, "UNAVAILABLE"
            detail = {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{self.faults.spec.retry_after:g}s",
            }
        error = {"code": status, "message": message, "status": reason, "details": [detail]}
        return Response(orjson.dumps({"error": error}), status_code=status, media_type="application/json")

    def _rpc(self, kind: str, key: bytes, message: dict[str, Any]) -> Response:
        """A JSON-RPC answer that reports UNAVAILABLE: as an error, or as a tool result with `isError`
        (its text a message led by the code or the Status as JSON, or the Status as structured content)."""
        if kind == "rpc-error":
            error = {
                "code": -32603,
                "message": f"UNAVAILABLE: {_UNAVAILABLE_MESSAGE}",
                "data": _UNAVAILABLE_STATUS,
            }
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        else:
            style = int(self.faults.draw("tool-error-style", key.hex()) * 3)
            if style == 0:
                result: dict[str, Any] = {"content": [_text(f"UNAVAILABLE: {_UNAVAILABLE_MESSAGE}")]}
            elif style == 1:
                result = {"content": [_text(orjson.dumps(_UNAVAILABLE_STATUS).decode())]}
            else:
                result = {"content": [_text(_UNAVAILABLE_MESSAGE)], "structuredContent": _UNAVAILABLE_STATUS}
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {**result, "isError": True}}
        return Response(orjson.dumps(reply), media_type="application/json")

    async def _drip(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app's whole answer, sent a few bytes at a time at `drip-bps`, until the client leaves."""
        recorded = _Recorded()
        await self.app(scope, receive, recorded.send)
        assert recorded.start is not None
        body = b"".join(recorded.body)
        rate = self.faults.spec.drip_bps
        step = max(1, int(rate / 10))
        async with _watching(receive) as gone:
            await send(recorded.start)
            for offset in range(0, len(body), step):
                await _body(send, body[offset : offset + step], more=True)
                await asyncio.wait({gone}, timeout=step / rate)
                if gone.done():
                    return
            await _body(send, b"")

    async def _huge(self, kind: str, key: bytes, scope: Scope, receive: Receive, send: Send) -> None:
        """A JSON answer led by `huge-mb` MB of whitespace (legal JSON), streamed without a length."""
        recorded = await self._answer(kind, key, "application/json", scope, receive, send)
        if recorded is None:
            return
        headers = [(k, v) for k, v in recorded.start["headers"] if k.lower() != b"content-length"]
        async with _watching(receive) as gone:
            await send({**recorded.start, "headers": headers})
            remaining = int(self.faults.spec.huge_mb * len(_PAD_CHUNK))
            while remaining > 0 and not gone.done():
                chunk = _PAD_CHUNK[:remaining]
                remaining -= len(chunk)
                await _body(send, chunk, more=True)
                await asyncio.sleep(0)
            await _body(send, b"".join(recorded.body))

    async def _primed(self, kind: str, key: bytes, scope: Scope, receive: Receive, send: Send) -> None:
        """An SSE answer led by a priming event: an event id and no data, for resumption."""
        recorded = await self._answer(kind, key, "text/event-stream", scope, receive, send)
        if recorded is None:
            return
        await send(recorded.start)
        await _body(send, _PRIMING_EVENT, more=True)
        await _body(send, b"".join(recorded.body))

    async def _answer(
        self, kind: str, key: bytes, media_type: str, scope: Scope, receive: Receive, send: Send
    ) -> _Recorded | None:
        """The app's successful answer in `media_type`, recorded to be altered; None when it gave
        another (an error, a notification's 202), which is then sent as it is and the fault undone."""
        recorded = _Recorded()
        await self.app(_with_accept(scope, media_type), receive, recorded.send)
        assert recorded.start is not None
        if recorded.ok and recorded.content_type() == media_type:
            return recorded
        self.faults.undo(kind, key)
        await send(recorded.start)
        await _body(send, b"".join(recorded.body))
        return None

    def _status(self, status: int) -> Response:
        if status in _PLAIN_STATUS:
            text = f"{status} {_PLAIN_STATUS[status]} (simulated fault)"
            return Response(text.encode(), status_code=status, media_type="text/plain")
        reason, message = _GOOGLE_STATUS[status]
        body = orjson.dumps({"error": {"code": status, "message": message, "status": reason}})
        headers = {"Retry-After": f"{self.faults.spec.retry_after:g}"} if status == 429 else None
        return Response(body, status_code=status, media_type="application/json", headers=headers)

    async def _slow(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer only after `slow-seconds`, unless the client gave up waiting first."""
        body_message = await receive()  # the replayed body, for the app later
        try:
            await asyncio.wait_for(_disconnected(receive), timeout=self.faults.spec.slow_seconds)
            return  # the client timed out and left: nothing to answer
        except TimeoutError:
            pass
        await self.app(scope, _replaying(body_message.get("body", b""), receive), send)

    async def _cut(self, kind: str, key: bytes, scope: Scope, receive: Receive, send: Send) -> None:
        """Let the app answer in the framing the fault needs, then send only half of it."""
        media_type = "text/event-stream" if kind == "cut-sse" else "application/json"
        recorded = await self._answer(kind, key, media_type, scope, receive, send)
        if recorded is None:
            return
        body = b"".join(recorded.body)
        half = body[: len(body) // 2]
        if kind == "bad-json":
            headers = [(k, v) for k, v in recorded.start["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(half)).encode()))
            await send({**recorded.start, "headers": headers})
            await _body(send, half)
            return
        await send(recorded.start)
        await _body(send, half, more=True)
        # Half the cuts drop the connection mid-body; the others end the stream cleanly, early.
        if self.faults.draw("cut-style", key.hex()) < 0.5 and await _drop_connection(send, reset=False):
            return
        await _body(send, b"")
