"""The SSE drainer on its own: it reads what is left, closes, and outlives a failing stream."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from pipelines.ces.drain import StreamDrainer


class Response:
    """What the drainer needs of an httpx.Response: `close()`."""

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def chunks(*parts: bytes, error: Exception | None = None) -> Iterator[bytes]:
    yield from parts
    if error is not None:
        raise error


def closed_soon(response: Response) -> bool:
    deadline = time.monotonic() + 2
    while not response.closed and time.monotonic() < deadline:
        time.sleep(0.005)
    return response.closed


def test_the_rest_is_read_and_the_response_closed_even_after_a_failing_stream() -> None:
    drainer = StreamDrainer()
    read: list[bytes] = []

    def recorded(*parts: bytes) -> Iterator[bytes]:
        for part in parts:
            read.append(part)
            yield part

    try:
        failing, after = Response(), Response()
        drainer.finish(failing, chunks(b"0\r\n", error=RuntimeError("stream broke")))  # type: ignore[arg-type]
        assert closed_soon(failing)
        drainer.finish(after, recorded(b"tail", b""))  # type: ignore[arg-type]
        assert closed_soon(after) and read == [b"tail", b""]
        assert drainer.enabled
    finally:
        drainer.close()


def test_more_than_max_bytes_after_the_response_turns_draining_off() -> None:
    drainer = StreamDrainer(max_bytes=10)
    try:
        chatty = Response()
        drainer.finish(chatty, chunks(b"x" * 8, b"x" * 8, b"x" * 8))  # type: ignore[arg-type]
        assert closed_soon(chatty)
        deadline = time.monotonic() + 2
        while drainer.enabled and time.monotonic() < deadline:
            time.sleep(0.005)
        assert not drainer.enabled
        later = Response()
        never_read: Any = chunks(error=AssertionError("a closed-at-once answer is not read"))
        drainer.finish(later, never_read)
        assert later.closed  # at once, on the caller's thread
    finally:
        drainer.close()


def test_after_close_answers_are_closed_at_once() -> None:
    drainer = StreamDrainer()
    drainer.close()
    response = Response()
    drainer.finish(response, chunks(b"tail"))  # type: ignore[arg-type]
    assert response.closed
