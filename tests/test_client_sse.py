"""The event-stream parser on its own: framing rules, line endings and chunk borders."""

from __future__ import annotations

import pytest

from pipelines.ces.sse import SseEvent, SseFormatError, iter_events, iter_lines, parse_sse


def events(*chunks: bytes, **kwargs: int) -> list[SseEvent]:
    return list(parse_sse(iter(chunks), **kwargs))


def test_single_event_with_defaults() -> None:
    assert events(b'data: {"a": 1}\n\n') == [SseEvent(b'{"a": 1}')]


def test_comments_are_skipped_and_other_fields_ignored() -> None:
    stream = b": keep-alive\n\nevent: message\nid: 7\nretry: 1500\ndata: x\n\n: another comment\n"
    assert events(stream) == [SseEvent(b"x", event="message")]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert events(b"data: first\ndata:second\ndata:  third\n\n") == [SseEvent(b"first\nsecond\n third")]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    stream = eol.join([b"event: ping", b"data: 1", b"", b"data: 2", b"data: 3", b"", b""])
    assert events(stream) == [SseEvent(b"1", event="ping"), SseEvent(b"2\n3")]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    assert list(iter_lines([b"a\r", b"\nb\r", b"\r", b"\nc"])) == [b"a", b"b", b"", b"c"]


def test_chunk_borders_anywhere() -> None:
    stream = b'data: {"k": "v"}\r\n\r\nid: 2\r\ndata: tail\r\n\r\n'
    whole = events(stream)
    for size in (1, 2, 3, 7):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert events(*chunks) == whole
    assert whole == [SseEvent(b'{"k": "v"}'), SseEvent(b"tail")]


def test_unicode_line_separators_inside_data_are_not_line_ends() -> None:
    data = '{"text": "a\u2028b\u0085c"}'
    assert events(f"data: {data}\n\n".encode()) == [SseEvent(data.encode())]
    assert events(f"data: {data}\n\n".encode())[0].data == data


def test_event_without_data_is_not_dispatched() -> None:
    assert events(b"id: prime\n\ndata: x\n\n") == [SseEvent(b"x")]


def test_event_cut_off_by_end_of_stream_is_discarded() -> None:
    assert events(b"data: complete\n\ndata: truncated") == [SseEvent(b"complete")]


def test_leading_byte_order_mark_is_ignored() -> None:
    assert events(b"\xef\xbb\xbfdata: x\n\n") == [SseEvent(b"x")]


def test_a_long_line_arriving_in_chunks_without_line_ends_is_one_line() -> None:
    stream = b"data: " + b"x" * 1000 + b"\n\nid: 2\ndata: tail\n\n"
    for size in (1, 7, 64, 500):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert events(*chunks) == [SseEvent(b"x" * 1000), SseEvent(b"tail")]
    with pytest.raises(SseFormatError):  # the size limit holds for a line built from chunks
        events(b"data: ", b"x" * 30, b"x" * 30, b"\n\n", max_event_bytes=50)


def test_oversized_event_is_an_error() -> None:
    with pytest.raises(SseFormatError):
        events(b"data: " + b"x" * 100 + b"\n\n", max_event_bytes=50)
    with pytest.raises(SseFormatError):
        events(b"data: 1234567890\n" * 10 + b"\n", max_event_bytes=50)


def test_a_one_line_event_is_a_view_of_the_received_line_not_a_copy() -> None:
    page = b'{"result": "' + b"x" * 1_000_000 + b'"}'
    line = b"data: " + page
    (event,) = iter_events([line, b""])
    assert isinstance(event.payload, memoryview) and event.payload.obj is line
    assert event.payload == page and event.data == page.decode()
    (joined,) = iter_events([b"data: a", b"data:b", b""])
    assert joined.payload == b"a\nb"


def test_an_event_whose_data_is_empty_is_not_dispatched() -> None:
    """The priming event of servers with an event store: an id, empty data, no message."""
    (event,) = events(b"id: 1\ndata:\n\n", b'id: 2\ndata: {"id": 1}\n\n')
    assert event.data == '{"id": 1}'
    (two_empty_lines,) = events(b"data:\ndata:\n\n")
    assert two_empty_lines.data == "\n"  # two data lines make one line feed: not empty
