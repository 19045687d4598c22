"""list_conversations paging semantics, over real HTTP: sizes, tokens, filters, sources, summaries, order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from simulator_fixtures import McpHttp

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.protojson.timeparse import parse_timestamp_micros

SCALE = SimulatorScale(seed=3, apps=1, days=3, conversations_per_day=60)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[McpHttp, str]]:
    with running_simulator(SimulatorConfig(scale=SCALE, response_mode="json")) as handle:
        caller = McpHttp(handle.url)
        yield caller, handle.apps[0]
        caller.close()


@pytest.fixture(scope="module")
def everything(served: tuple[McpHttp, str]) -> list[dict[str, Any]]:
    caller, app = served
    return caller.all_items("list_conversations", "conversations", parent=app, pageSize=50)


def _names(items: list[dict[str, Any]]) -> set[str]:
    return {item["name"] for item in items}


def test_default_page_size_and_cap(served: tuple[McpHttp, str]) -> None:
    caller, app = served
    default_sizes = [len(p.get("conversations", [])) for p in caller.pages("list_conversations", parent=app)]
    capped_sizes = [
        len(p.get("conversations", [])) for p in caller.pages("list_conversations", parent=app, pageSize=500)
    ]
    assert max(default_sizes) == 20 and max(capped_sizes) == 50
    assert sum(default_sizes) == sum(capped_sizes) == SCALE.conversation_count


def test_short_and_empty_pages_still_carry_a_token_and_the_last_page_none() -> None:
    config = SimulatorConfig(scale=SCALE, short_page_fraction=1.0, response_mode="json")
    with running_simulator(config) as handle:
        caller = McpHttp(handle.url)
        pages = list(caller.pages("list_conversations", parent=handle.apps[0], pageSize=10))
        caller.close()
    sizes = [len(page.get("conversations", [])) for page in pages]
    assert all("nextPageToken" in page for page in pages[:-1]) and "nextPageToken" not in pages[-1]
    assert any(0 < size < 10 for size in sizes[:-1])
    assert any(size == 0 for size in sizes[:-1])  # empty page, yet more to come
    assert sum(sizes) == SCALE.conversation_count


def test_page_token_is_bound_to_the_request(served: tuple[McpHttp, str]) -> None:
    caller, app = served
    token = caller.call("list_conversations", parent=app, pageSize=5)["nextPageToken"]
    mismatch = caller.call_error("list_conversations", parent=app, pageToken=token, sources=["EVAL"])
    assert mismatch.startswith("INVALID_ARGUMENT:") and "page token" in mismatch
    assert caller.call_error("list_conversations", parent=app, pageToken="not-a-token").startswith(
        "INVALID_ARGUMENT:"
    )
    # A different page size is fine (AIP-158): only parent, filter and sources are bound.
    assert caller.call("list_conversations", parent=app, pageToken=token, pageSize=7)["conversations"]


def test_results_are_not_in_start_time_order(everything: list[dict[str, Any]]) -> None:
    starts = [parse_timestamp_micros(c["startTime"]) for c in everything]
    assert starts != sorted(starts) and starts != sorted(starts, reverse=True)


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ("2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"),
        ("2026-11-02T05:30:00+05:30", "2026-11-02T18:15:30.5-02:00"),  # offsets other than Z
    ],
)
def test_start_time_filter_matches_a_client_side_filter(
    served: tuple[McpHttp, str], everything: list[dict[str, Any]], lower: str, upper: str
) -> None:
    caller, app = served
    filtered = caller.all_items(
        "list_conversations",
        "conversations",
        parent=app,
        pageSize=50,
        filter=f'start_time >= "{lower}" AND start_time < "{upper}"',
    )
    low, high = parse_timestamp_micros(lower), parse_timestamp_micros(upper)
    expected = {c["name"] for c in everything if low <= parse_timestamp_micros(c["startTime"]) < high}
    assert expected and _names(filtered) == expected


def test_strict_and_inclusive_bounds(served: tuple[McpHttp, str], everything: list[dict[str, Any]]) -> None:
    caller, app = served
    pivot = everything[0]["startTime"]
    inclusive = caller.all_items(
        "list_conversations",
        "conversations",
        parent=app,
        pageSize=50,
        filter=f'start_time >= "{pivot}" AND start_time <= "{pivot}"',
    )
    strict = caller.all_items(
        "list_conversations",
        "conversations",
        parent=app,
        pageSize=50,
        filter=f'start_time > "{pivot}" AND start_time <= "{pivot}"',
    )
    assert _names(inclusive) == {everything[0]["name"]} and strict == []


def test_only_days_overlapping_the_window_are_candidates(served: tuple[McpHttp, str]) -> None:
    caller, app = served
    one_day = caller.call(
        "list_conversations", parent=app, pageSize=50, filter='start_time >= "2026-11-03T00:00:00Z"'
    )
    # One day of 60 candidates: with only that day scanned, two pages of 50 finish the listing.
    second = caller.call(
        "list_conversations",
        parent=app,
        pageSize=50,
        filter='start_time >= "2026-11-03T00:00:00Z"',
        pageToken=one_day["nextPageToken"],
    )
    assert len(one_day["conversations"]) + len(second.get("conversations", [])) == 60
    assert "nextPageToken" not in second


@pytest.mark.parametrize(
    "bad_filter",
    [
        'create_time > "2026-11-01T00:00:00Z"',
        'start_time > "yesterday"',
        "start_time > 2026-11-01",
        'start_time > "2026-11-01T00:00:00Z" OR start_time < "2026-11-02T00:00:00Z"',
    ],
)
def test_unsupported_filters_are_invalid_arguments(served: tuple[McpHttp, str], bad_filter: str) -> None:
    caller, app = served
    message = caller.call_error("list_conversations", parent=app, filter=bad_filter)
    assert message.startswith("INVALID_ARGUMENT: invalid filter")


def test_sources_filter_and_the_deprecated_source(
    served: tuple[McpHttp, str], everything: list[dict[str, Any]]
) -> None:
    caller, app = served
    by_source = {
        s: {c["name"] for c in everything if c["source"] == s} for s in ("EVAL", "SIMULATOR", "LIVE")
    }
    evals = caller.all_items("list_conversations", "conversations", parent=app, pageSize=50, sources=["EVAL"])
    assert _names(evals) == by_source["EVAL"]
    mixed = caller.all_items("list_conversations", "conversations", parent=app, sources=["EVAL", "SIMULATOR"])
    assert _names(mixed) == by_source["EVAL"] | by_source["SIMULATOR"]
    deprecated = caller.all_items("list_conversations", "conversations", parent=app, source="SIMULATOR")
    assert _names(deprecated) == by_source["SIMULATOR"]
    sources_win = caller.all_items(
        "list_conversations", "conversations", parent=app, source="LIVE", sources=["EVAL"]
    )
    assert _names(sources_win) == by_source["EVAL"]
    assert caller.call_error("list_conversations", parent=app, sources=["PHONE"]).startswith(
        "INVALID_ARGUMENT:"
    )


def test_summaries_need_hydration(served: tuple[McpHttp, str], everything: list[dict[str, Any]]) -> None:
    caller, _ = served
    summaries = [c for c in everything if "turns" not in c and c.get("turnCount")]
    assert 0.05 < len(summaries) / len(everything) < 0.3
    for summary in summaries[:5]:
        full = caller.call("get_conversation", name=summary["name"])
        assert len(full["turns"]) == summary["turnCount"] == full["turnCount"]


def test_unknown_parents_and_names(served: tuple[McpHttp, str], everything: list[dict[str, Any]]) -> None:
    caller, app = served
    assert caller.call_error("list_conversations", parent=app.replace("support-bot", "nope")).startswith(
        "NOT_FOUND:"
    )
    assert caller.call_error("list_conversations", parent="apps/x").startswith("INVALID_ARGUMENT:")
    tampered = everything[0]["name"][:-1] + ("0" if everything[0]["name"][-1] != "0" else "1")
    assert (
        caller.call_error("get_conversation", name=tampered)
        == f"NOT_FOUND: conversation {tampered} not found"
    )


def _first_pages(url: str, app: str) -> list[str]:
    caller = McpHttp(url)
    first = caller.tool_result("list_conversations", parent=app, pageSize=30)
    second = caller.tool_result(
        "list_conversations", parent=app, pageSize=30, pageToken=first["structuredContent"]["nextPageToken"]
    )
    runs = caller.tool_result("list_evaluation_runs", parent=app)
    caller.close()
    return [result["content"][0]["text"] for result in (first, second, runs)]


def test_same_seed_same_bytes_other_seed_other_data() -> None:
    texts = []
    for scale in (SCALE, SCALE, SimulatorScale(seed=4, apps=1, days=3, conversations_per_day=60)):
        with running_simulator(SimulatorConfig(scale=scale)) as handle:
            texts.append(_first_pages(handle.url, handle.apps[0]))
    assert texts[0] == texts[1]
    assert all(a != b for a, b in zip(texts[0], texts[2], strict=True))
