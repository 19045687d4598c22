"""A streaming Server-Sent Events parser (WHATWG `text/event-stream`) over raw byte chunks: no
event is split on a Unicode line separator (legal inside JSON strings; `str.splitlines` cuts
there), and memory is bounded by one event, not the whole body."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

DEFAULT_MAX_EVENT_BYTES = 256 * 1024 * 1024
"""Large enough for any conversation trace, small enough to stop a runaway stream."""

_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class SseFormatError(ValueError):
    """The stream breaks the event-stream format, or one event exceeds the size limit."""


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event (`id` and `retry` are not kept: the client never resumes a stream)."""

    payload: bytes | memoryview
    """The data lines joined by LF, as received (a JSON parser reads UTF-8 bytes directly); an
    event of one data line, what servers send, is a view of that line: a page is not copied."""
    event: str = "message"

    @property
    def data(self) -> str:
        """The data as text; invalid UTF-8 becomes U+FFFD, as the spec's decoding says."""
        return bytes(self.payload).decode("utf-8", errors="replace")


def iter_lines(chunks: Iterable[bytes], *, max_line_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> Iterator[bytes]:
    """Lines ended by CRLF, LF or CR across chunk borders (and a last unended one); regex only for a CR."""
    parts: list[bytes] = []
    pending_size = 0
    skip_lf = False  # the previous chunk ended with CR, which may be the first half of CRLF
    for chunk in chunks:
        if skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        skip_lf = False
        if b"\r" in chunk:
            pieces = _LINE_END.split(chunk)
            skip_lf = chunk.endswith(b"\r")
        elif b"\n" in chunk:
            pieces = chunk.split(b"\n")
        else:
            pieces = [chunk]
        *complete, rest = pieces
        for piece in complete:
            parts.append(piece)
            yield b"".join(parts)
            parts, pending_size = [], 0
        if rest:
            pending_size += len(rest)
            if pending_size > max_line_bytes:
                raise SseFormatError(f"an event-stream line exceeds {max_line_bytes} bytes")
            parts.append(rest)
    if parts:
        yield b"".join(parts)


def iter_events(
    lines: Iterable[bytes], *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
) -> Iterator[SseEvent]:
    """Events as the spec says: sent on a blank line, if with data; one cut off at the end is dropped."""
    data: list[memoryview] = []
    data_size = 0
    event_type = b""
    first = True
    for line in lines:
        if first:
            first = False
            if line.startswith(_BOM):
                line = line[len(_BOM) :]
        if not line:
            if data and (len(data) > 1 or len(data[0])):
                yield SseEvent(
                    payload=data[0] if len(data) == 1 else b"\n".join(data),
                    event=event_type.decode("utf-8", errors="replace") or "message",
                )
            data, data_size, event_type = [], 0, b""
            continue
        if line.startswith(b":"):
            continue
        colon = line.find(b":")
        if colon < 0:
            name, start = line, len(line)
        else:
            name = line[:colon]
            start = colon + 2 if line.startswith(b" ", colon + 1) else colon + 1
        if name == b"data":
            data_size += len(line) - start + 1
            if data_size > max_event_bytes:
                raise SseFormatError(f"an event exceeds {max_event_bytes} bytes")
            data.append(memoryview(line)[start:])
        elif name == b"event":
            event_type = line[start:]


def parse_sse(
    chunks: Iterable[bytes], *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
) -> Iterator[SseEvent]:
    return iter_events(iter_lines(chunks, max_line_bytes=max_event_bytes), max_event_bytes=max_event_bytes)
