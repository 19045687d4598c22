"""How a JSON-RPC reply travels back: one application/json body, or a text/event-stream.

The SSE form is deliberately the awkward-but-legal one a client must cope with: a comment line
first (`: keep-alive`), a notification event before the response, the response in a later event
and, every other time, split over several `data:` lines (which the SSE spec joins with newlines;
the split points lie between JSON tokens, so the joined text is the same JSON).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from starlette.responses import Response, StreamingResponse

from pipelines.ces.simulator.server.config import ResponseMode

SSE_HEADERS = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}


def accepted_media(accept: str) -> tuple[bool, bool]:
    """(accepts application/json, accepts text/event-stream); a missing header accepts both."""
    accept = accept.lower()
    if not accept.strip() or "*/*" in accept:
        return True, True
    return (
        "application/json" in accept or "application/*" in accept,
        "text/event-stream" in accept or "text/*" in accept,
    )


def use_sse(mode: ResponseMode, response_number: int, accepts_json: bool, accepts_sse: bool) -> bool:
    """Which framing this response gets: the configured mode, unless the client cannot take it."""
    wanted = mode == "sse" or (mode == "mixed" and response_number % 2 == 1)
    return accepts_sse if wanted else not accepts_json


def json_response(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _event(lines: Sequence[bytes]) -> bytes:
    return b"event: message\n" + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"


def sse_response(
    notifications: Sequence[bytes],
    reply: Sequence[bytes],
    *,
    multiline: bool,
    headers: dict[str, str] | None = None,
) -> StreamingResponse:
    """Stream `notifications` (one event each) and then the reply, as separate writes."""

    async def events() -> AsyncIterator[bytes]:
        yield b": keep-alive\n\n"
        for notification in notifications:
            yield _event([notification])
        await asyncio.sleep(0)  # let the earlier events leave before the (possibly large) reply
        yield _event(reply if multiline else [b"".join(reply)])

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={**SSE_HEADERS, **(headers or {})}
    )
