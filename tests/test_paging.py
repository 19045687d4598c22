"""Paging, conversation fetch with hydration, and the pure replay of the records."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest
from client_fixtures import (
    Call,
    ToolServer,
    fast_limiter,
    mcp_server,
    rpc_error,
    rpc_result,
    settings_for,
    sse_response,
    tool_result,
)
from starlette.responses import Response

from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesDataError, CesPagingError, CesProtocolError
from pipelines.ces.paging import iter_page_records
from pipelines.ces.records import ApiRecord
from pipelines.ces.tools import DEFAULT_LISTING, Listing, iter_conversation_records, resolve_conversations
from pipelines.ces.window import TimeWindow
from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.lake.store import Lake
from pipelines.protojson import deepjson

APP = "projects/p/locations/global/apps/a"
WINDOW = TimeWindow.for_day(date(2026, 3, 1))


def conversation(cid: str, start: str, *, turns: int = 2, full: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {"name": f"{APP}/conversations/{cid}", "startTime": start, "turnCount": turns}
    if full and turns:
        item["turns"] = [
            {
                "messages": [{"role": "user", "chunks": [{"text": f"{cid}-{i}"}]}],
                "rootSpan": {"name": "Turn", "startTime": start, "duration": "1s"},
            }
            for i in range(turns)
        ]
    return item


C1 = conversation("c1", "2026-03-01T00:00:00Z", full=True)  # complete in the listing
C2 = conversation("c2", "2026-03-01T10:00:00.5+02:00")  # summary, inside (08:00:00.5Z)
C3 = conversation("c3", "2026-02-28T23:59:59.999Z")  # summary, outside: the server ignored the filter
C4 = conversation("c4", "2026-03-01T23:59:59.999999Z")  # summary, listed twice
C5 = conversation("c5", "yesterday")  # cannot be placed
C6 = conversation("c6", "2026-03-01T12:00:00Z", turns=0)  # nothing to hydrate
C7 = conversation("c7", "2026-03-02T00:00:00Z")  # the window's end is exclusive

PAGES: dict[str | None, dict[str, Any]] = {
    None: {"conversations": [C1, C2, C3], "nextPageToken": "t1"},
    "t1": {"nextPageToken": "t2"},  # an empty page that still has a token
    "t2": {"conversations": [C4, C5, C7], "nextPageToken": "t3"},
    "t3": {"conversations": [C4, C6], "nextPageToken": ""},
}


def full(item: dict[str, Any]) -> dict[str, Any]:
    cid = item["name"].rsplit("/", 1)[1]
    return conversation(cid, item["startTime"], turns=item["turnCount"], full=True) | {"hydrated": True}


class ConversationServer:
    """list_conversations over fixed pages (ignoring the filter); get_conversation after a delay."""

    def __init__(self, pages: dict[str | None, dict[str, Any]], *, max_delay: float = 0.0):
        self.pages = pages
        self.by_name = {c["name"]: c for page in pages.values() for c in page.get("conversations", [])}
        self.max_delay = max_delay

    def __call__(self, call: Call) -> Response:
        if call.tool == "list_conversations":
            return rpc_result(call, tool_result(self.pages[call.arguments.get("pageToken")]))
        if call.tool == "get_conversation":
            message = {
                "jsonrpc": "2.0",
                "id": call.id,
                "result": tool_result(full(self.by_name[call.arguments["name"]])),
            }
            events = [": working\n\n", f"data: {orjson.dumps(message).decode()}\n\n"]
            return sse_response(events, delay=random.uniform(0, self.max_delay))
        return rpc_error(call, -32601, "no such tool")


def client_for(url: str) -> CesMcpClient:
    return CesMcpClient(settings_for(url), rate_limiter=fast_limiter())


def fetch(
    server_logic: ConversationServer, listing: Listing = DEFAULT_LISTING, **kwargs: Any
) -> tuple[list[ApiRecord], list[Call]]:
    with mcp_server(server_logic) as (server, url), client_for(url) as client:
        records = list(iter_conversation_records(client, APP, WINDOW, listing, **kwargs))
    return records, server.calls


def short(name: str) -> str:
    return name.rsplit("/", 1)[1]


# -- the generic pager -------------------------------------------------------------------------


def test_a_server_handing_out_empty_pages_forever_is_given_up_on() -> None:
    """Fresh tokens with empty pages would spend the quota for hours; a bound stops it, after
    the pages with items, counting only empty pages in a row."""
    pages = {None: {"conversations": [conversation("a", "2026-03-01T01:00:00Z")], "nextPageToken": "e1"}}
    pages |= {f"e{i}": {"conversations": [], "nextPageToken": f"e{i + 1}"} for i in range(1, 40)}
    pages["e3"] = {"conversations": [conversation("b", "2026-03-01T02:00:00Z")], "nextPageToken": "e4"}
    with pytest.raises(CesPagingError, match="5 empty pages in a row") as info:
        fetch(ConversationServer(pages), listing=Listing(max_empty_pages=5))
    assert "CES_MAX_EMPTY_PAGES" in str(info.value)
    with mcp_server(ConversationServer(pages)) as (server, url), client_for(url) as client:
        with pytest.raises(CesPagingError):
            list(
                iter_page_records(
                    client,
                    "list_conversations",
                    {"parent": APP},
                    items_key="conversations",
                    max_empty_pages=5,
                )
            )
        asked = [c.arguments.get("pageToken") for c in server.calls]
    assert asked == [None, "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"]


def test_pages_are_followed_through_empty_pages_until_the_token_is_empty() -> None:
    with mcp_server(ConversationServer(PAGES)) as (server, url), client_for(url) as client:
        pages = list(
            r.result
            for r in iter_page_records(
                client, "list_conversations", {"parent": APP}, items_key="conversations"
            )
        )
    assert pages == [PAGES[None], PAGES["t1"], PAGES["t2"], PAGES["t3"]]
    assert [c.arguments.get("pageToken") for c in server.calls] == [None, "t1", "t2", "t3"]
    assert all(c.arguments["parent"] == APP for c in server.calls)


def test_records_hold_the_exact_arguments_and_result_of_each_page() -> None:
    with mcp_server(ConversationServer(PAGES)) as (_, url), client_for(url) as client:
        records = list(
            iter_page_records(client, "list_conversations", {"parent": APP}, items_key="conversations")
        )
    assert [r.arguments for r in records] == [
        {"parent": APP},
        {"parent": APP, "pageToken": "t1"},
        {"parent": APP, "pageToken": "t2"},
        {"parent": APP, "pageToken": "t3"},
    ]
    assert [r.result for r in records] == list(PAGES.values())
    assert all(r.tool == "list_conversations" and r.fetched_at.endswith("Z") for r in records)
    assert ApiRecord.from_dict(orjson.loads(orjson.dumps(records[2].to_dict()))) == records[2]


def test_a_token_handed_out_twice_is_a_paging_error() -> None:
    looping = {
        None: {"conversations": [C1], "nextPageToken": "a"},
        "a": {"nextPageToken": "b"},
        "b": {"nextPageToken": "a"},
    }
    with mcp_server(ConversationServer(looping)) as (server, url), client_for(url) as client:
        pages = (
            r.result
            for r in iter_page_records(
                client, "list_conversations", {"parent": APP}, items_key="conversations"
            )
        )
        with pytest.raises(CesPagingError, match="'a' twice"):
            list(pages)
    assert len(server.calls) == 3


def test_page_count_guard() -> None:
    endless = ToolServer(
        {"list_evaluation_runs": lambda args: {"nextPageToken": f"{args.get('pageToken', '')}x"}}
    )
    with mcp_server(endless) as (server, url), client_for(url) as client:
        pages = (
            r.result
            for r in iter_page_records(
                client, "list_evaluation_runs", {}, items_key="evaluationRuns", max_pages=5
            )
        )
        with pytest.raises(CesPagingError, match="after 5"):
            list(pages)
    assert len(server.calls) == 5


# -- conversation fetch ------------------------------------------------------------------------


def test_fetch_yields_each_page_then_its_hydrations_inside_the_window_only() -> None:
    records, calls = fetch(ConversationServer(PAGES))
    assert [(r.tool, short(r.arguments["name"]) if "name" in r.arguments else None) for r in records] == [
        ("list_conversations", None),
        ("get_conversation", "c2"),
        ("list_conversations", None),
        ("list_conversations", None),
        ("get_conversation", "c4"),
        ("list_conversations", None),
    ]
    hydrated = [short(c.arguments["name"]) for c in calls if c.tool == "get_conversation"]
    assert hydrated == ["c2", "c4"]  # not c3/c7 (outside), c5 (unplaceable), c1/c6 (complete), c4 only once
    first = records[0].arguments
    assert first == {
        "parent": APP,
        "pageSize": 100,
        "filter": WINDOW.aip160_filter(),
        "sources": ["LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL"],  # every source, said explicitly
    }
    assert first["filter"] == 'start_time >= "2026-03-01T00:00:00Z" AND start_time < "2026-03-02T00:00:00Z"'


def test_the_sources_given_are_sent() -> None:
    records, _ = fetch(ConversationServer(PAGES), listing=Listing(sources=("LIVE", "EVAL"), page_size=7))
    assert records[0].arguments["sources"] == ["LIVE", "EVAL"]
    assert records[0].arguments["pageSize"] == 7


def test_hydration_is_concurrent_and_its_order_deterministic() -> None:
    many = [conversation(f"h{i:02d}", f"2026-03-01T{i:02d}:00:00Z") for i in range(12)]
    pages = {None: {"conversations": many[:6], "nextPageToken": "n"}, "n": {"conversations": many[6:]}}
    started = time.monotonic()
    first, _ = fetch(ConversationServer(pages, max_delay=0.3), hydrate_workers=6)
    elapsed = time.monotonic() - started
    second, _ = fetch(ConversationServer(pages, max_delay=0.3), hydrate_workers=3)
    names = [r.arguments.get("name") for r in first]
    assert names == [r.arguments.get("name") for r in second]
    assert names == [None, *(c["name"] for c in many[:6]), None, *(c["name"] for c in many[6:])]
    assert [r.result for r in first] == [r.result for r in second]
    assert elapsed < 12 * 0.15  # a serial fetch would average 12 x 0.15 s


def test_a_failing_hydration_stops_the_fetch() -> None:
    def handler(call: Call) -> Response:
        if call.tool == "get_conversation":
            return rpc_result(
                call, {"isError": True, "content": [{"type": "text", "text": "backend unavailable"}]}
            )
        return ConversationServer(PAGES)(call)

    with mcp_server(handler) as (_, url), client_for(url) as client:
        records = iter_conversation_records(client, APP, WINDOW)
        assert next(records).tool == "list_conversations"
        with pytest.raises(Exception, match="get_conversation failed: backend unavailable"):
            next(records)


# -- replay ------------------------------------------------------------------------------------


def test_replay_yields_each_conversation_once_full_when_hydrated_in_listing_order() -> None:
    records, _ = fetch(ConversationServer(PAGES))
    rejects: list[tuple[Any, str]] = []
    conversations = list(
        resolve_conversations(records, WINDOW, on_reject=lambda obj, why: rejects.append((obj, why)))
    )
    assert [short(c["name"]) for c in conversations] == ["c1", "c2", "c4", "c6"]
    by_id = {short(c["name"]): c for c in conversations}
    assert by_id["c2"] == full(C2) and by_id["c4"] == full(C4)
    assert by_id["c1"] == C1 and by_id["c6"] == C6
    assert [(short(obj["name"]), why) for obj, why in rejects] == [
        ("c5", "unparseable startTime: not an RFC 3339 timestamp: 'yesterday'")
    ]


def test_replay_from_json_lines_equals_replay_of_records() -> None:
    records, _ = fetch(ConversationServer(PAGES))
    lines = [orjson.dumps(r.to_dict()) for r in records]
    ignore = lambda obj, why: None  # noqa: E731
    assert list(
        resolve_conversations((orjson.loads(line) for line in lines), WINDOW, on_reject=ignore)
    ) == list(resolve_conversations(records, WINDOW, on_reject=ignore))


def test_replay_without_a_reject_handler_raises_on_unplaceable_conversations() -> None:
    records, _ = fetch(ConversationServer(PAGES))
    with pytest.raises(CesDataError, match="c5: unparseable startTime"):
        list(resolve_conversations(records, WINDOW))


def test_objects_without_name_or_start_are_rejected_not_dropped() -> None:
    page = {"conversations": [{"startTime": "2026-03-01T01:00:00Z"}, {"name": "x"}, "junk", C1]}
    record = ApiRecord("list_conversations", {"parent": APP}, page, "2026-03-02T00:00:00Z")
    rejects: list[str] = []
    out = list(resolve_conversations([record], WINDOW, on_reject=lambda obj, why: rejects.append(why)))
    assert out == [C1]
    assert rejects == [
        "conversation has no name",
        "conversation has no startTime",
        "listed conversation is not a JSON object",
    ]


def test_replay_refuses_records_out_of_fetch_order() -> None:
    records, _ = fetch(ConversationServer(PAGES))
    shuffled = [records[0], records[2], records[1], *records[3:]]  # c2's full version after the next page
    with pytest.raises(CesDataError, match="c2' does not follow"):
        list(resolve_conversations(shuffled, WINDOW, on_reject=lambda obj, why: None))


# -- pages kept as the server sent them ----------------------------------------------------------


def _verbatim_page_server(structured_text: bytes) -> Any:
    """list_conversations answered with `structured_text` spliced in as the structured content."""

    payload = orjson.loads(structured_text)
    items = payload["conversations"] if isinstance(payload["conversations"], list) else []
    listed = {"conversations": [c for c in items if isinstance(c, dict)]}

    def handler(call: Call) -> Response:
        if call.tool == "get_conversation":
            return ConversationServer({None: listed})(call)
        body = b"".join(
            (
                b'{"jsonrpc":"2.0","id":',
                orjson.dumps(call.id),
                b',"result":{"content":[{"type":"text","text":',
                orjson.dumps(orjson.dumps(payload).decode()),
                b'}],"structuredContent":',
                structured_text,
                b"}}",
            )
        )
        return Response(body, media_type="application/json")

    return handler


def test_a_pretty_printed_page_reaches_the_lake_as_one_line_with_its_values() -> None:
    text = (
        b'{\n  "conversations": [\n    {"name": "' + APP.encode() + b'/conversations/c\\u00e9",'
        b' "startTime": "2026-03-01T01:00:00Z", "turnCount": 1, "score": 1.50}\n  ]\n}'
    )
    with mcp_server(_verbatim_page_server(text)) as (_, url), client_for(url) as client:
        records = list(iter_conversation_records(client, APP, WINDOW))
    line = deepjson.dumps(records[0].to_dict())
    assert b"\n" not in line
    assert orjson.loads(line)["result"] == orjson.loads(text)


def test_a_page_the_fast_reader_cannot_read_is_decoded_whole() -> None:
    odd = {"conversations": ["not an object", C2, {"name": 7, "startTime": "2026-03-01T01:00:00Z"}]}
    with mcp_server(_verbatim_page_server(orjson.dumps(odd))) as (_, url), client_for(url) as client:
        records = list(iter_conversation_records(client, APP, WINDOW))
    assert [(r.tool, r.arguments.get("name")) for r in records] == [
        ("list_conversations", None),
        ("get_conversation", C2["name"]),
    ]
    rejects: list[str] = []
    replayed = list(resolve_conversations(records, WINDOW, on_reject=lambda obj, why: rejects.append(why)))
    assert replayed == [full(C2)]
    assert rejects == ["listed conversation is not a JSON object", "conversation has no name"]


def test_a_page_whose_conversations_are_not_a_list_is_a_protocol_error() -> None:
    text = b'{"conversations": {"name": "x"}}'
    with (
        mcp_server(_verbatim_page_server(text)) as (_, url),
        client_for(url) as client,
        pytest.raises(CesProtocolError, match="'conversations' is not an array"),
    ):
        list(iter_conversation_records(client, APP, WINDOW))


def test_a_page_sent_only_as_text_content_is_kept_as_its_json() -> None:
    def handler(call: Call) -> Response:
        page = PAGES[call.arguments.get("pageToken")] if call.tool == "list_conversations" else full(C2)
        return rpc_result(call, tool_result(page, structured=False))

    with mcp_server(handler) as (_, url), client_for(url) as client:
        text_only = list(iter_conversation_records(client, APP, WINDOW))
    structured, _ = fetch(ConversationServer(PAGES))
    assert [r.tool for r in text_only] == [r.tool for r in structured]
    assert [r.to_dict()["result"] for r in text_only][:2] == [PAGES[None], full(C2)]


def test_the_next_page_is_fetched_while_the_caller_works_and_dropped_when_it_stops() -> None:
    from pipelines.ces.daemon_threads import prefetched

    produced: list[int] = []
    dropped: list[int] = []
    closed = threading.Event()

    def pages() -> Iterator[int]:
        try:
            for page in range(5):
                produced.append(page)
                yield page
        finally:
            closed.set()

    ahead = prefetched(pages(), on_drop=dropped.append)
    assert next(ahead) == 0
    deadline = time.monotonic() + 5
    while len(produced) < 2 and time.monotonic() < deadline:  # page 1 comes without being asked for
        time.sleep(0.01)
    assert produced == [0, 1]
    ahead.close()  # page 1 is dropped and the pages closed as soon as page 1 is made, not waited for
    assert closed.wait(5) and dropped == [1]


class _Interrupted(BaseException):
    """What a signal handler raises, Dagster's as well as Python's own KeyboardInterrupt."""


def test_a_caller_stopping_while_a_page_is_in_flight_does_not_wait_for_it() -> None:
    """A page held by its server (here, until released) does not hold a caller that stops: on a
    signal or on an early close alike, the page is dropped and the pages closed when it comes."""
    from pipelines.ces.daemon_threads import prefetched

    release = threading.Event()
    dropped: list[int] = []
    closed = threading.Event()

    def pages() -> Iterator[int]:
        try:
            yield 0
            release.wait()
            yield 1
        finally:
            closed.set()

    def consume() -> None:
        for _ in prefetched(pages(), on_drop=dropped.append):
            raise _Interrupted

    started = time.monotonic()
    with pytest.raises(_Interrupted):
        consume()
    assert time.monotonic() - started < 1 and not closed.is_set()
    release.set()
    assert closed.wait(5) and dropped == [1]


def test_an_error_of_the_pager_is_raised_where_its_page_would_have_come() -> None:
    from pipelines.ces.daemon_threads import prefetched

    def pages() -> Iterator[int]:
        yield 0
        raise CesPagingError("page token refused")

    taken: list[int] = []
    with pytest.raises(CesPagingError, match="refused"):
        for page in prefetched(pages(), on_drop=taken.append):
            taken.append(page)
    assert taken == [0]


def test_the_fetch_counts_what_a_server_ignoring_the_filter_listed_outside_the_day(tmp_path: Path) -> None:
    with mcp_server(ConversationServer(PAGES)) as (_, url), client_for(url) as client:
        result = fetch_conversation_partition(client, Lake(str(tmp_path)), APP, date(2026, 3, 1))
    # C3 ends the day before, C7 starts the day after: listed, not hydrated, not loaded
    assert (result.pages, result.listed, result.outside) == (4, 8, 2)


def test_the_hydration_policy_decides_which_listed_conversations_are_fetched_in_full() -> None:
    untraced = conversation("u1", "2026-03-01T05:00:00Z", full=True)
    for turn in untraced["turns"]:
        del turn["rootSpan"]  # turns listed without their traces
    pages = {None: {"conversations": [C1, C2, untraced, C6]}}

    def fetched(hydrate: str) -> list[str]:
        records, _ = fetch(ConversationServer(pages), listing=Listing(hydrate=hydrate))
        return [short(r.arguments["name"]) for r in records if r.tool == "get_conversation"]

    assert fetched("auto") == ["c2", "u1"]  # the summary, and the conversation without traces
    assert fetched("always") == ["c1", "c2", "u1", "c6"]
    assert fetched("never") == []


def test_the_fetch_counts_the_conversations_listed_without_traces(tmp_path: Path) -> None:
    with mcp_server(ConversationServer(PAGES)) as (_, url), client_for(url) as client:
        result = fetch_conversation_partition(client, Lake(str(tmp_path)), APP, date(2026, 3, 1))
    assert (result.without_traces, result.hydrated) == (2, 2)  # C2 and C4: summaries of the day
