"""Flattening Conversation JSON: exact values per table, edge cases, and rejects."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pyarrow as pa
import pytest
from conversation_samples import (
    APP,
    conversation_name,
    flatten_conversations,
    full_conversation,
    legacy_conversation,
    with_changes,
)

from pipelines.transform.conversations import ConversationFlattener
from pipelines.transform.schemas import CONVERSATION_TABLES


def rows(conversations: list, table: str) -> list[dict]:
    tables, _ = flatten_conversations(conversations)
    return tables[table].to_pylist()


def test_every_table_has_exactly_its_schema() -> None:
    tables, rejects = flatten_conversations([full_conversation()])
    assert rejects == []
    for spec in CONVERSATION_TABLES:
        assert tables[spec.name].schema == spec.schema, spec.name


def test_conversation_row() -> None:
    (row,) = rows([full_conversation()], "conversations")
    assert row == {
        "conversation_name": conversation_name("c1"),
        "app": APP,
        "conversation_id": "c1",
        "start_time": datetime(2026, 11, 1, 10, 0, tzinfo=UTC),
        "end_time": datetime(2026, 11, 1, 10, 2, 30, 250000, tzinfo=UTC),
        "duration_seconds": 150.25,
        "turn_count": 2,
        "source": "LIVE",
        "channel_type": "AUDIO",
        "input_types": ["INPUT_TYPE_AUDIO", "INPUT_TYPE_TEXT"],
        "entry_agent": f"{APP}/agents/root",
        "deployment": f"{APP}/deployments/prod",
        "app_version": f"{APP}/versions/7",
        "language_code": "en-US",
    }


def test_turns_count_messages_and_spans_and_take_the_root_duration_string() -> None:
    turns = rows([full_conversation()], "turns")
    assert [(t["turn_index"], t["message_count"], t["span_count"], t["duration_seconds"]) for t in turns] == [
        (0, 2, 4, 2.999),
        (1, 3, 0, None),
    ]
    assert turns[0]["user_intended_text"] == "where is my order"
    assert turns[0]["start_time"] == datetime(2026, 11, 1, 10, 0, 1, tzinfo=UTC)


def test_top_level_messages_load_with_a_null_turn_only_when_there_are_no_turns() -> None:
    """The deprecated top-level `messages` of a conversation with turns repeat the turns'
    messages: loading them too would count every tool call twice."""
    messages = rows([full_conversation(), legacy_conversation()], "messages")
    positions = [
        (m["conversation_name"][-2:], m["turn_index"], m["message_index"], m["role"], m["chunk_count"])
        for m in messages
    ]
    assert positions == [
        ("c1", 0, 0, "user", 2),
        ("c1", 0, 1, "agent", 5),
        ("c1", 1, 0, "user", 1),
        ("c1", 1, 1, "agent", 1),
        ("c1", 1, 2, "agent", 5),
        ("c0", None, 0, "user", 2),
    ]
    assert messages[1]["event_time"] == datetime(2026, 11, 1, 10, 0, 3, 123456, tzinfo=UTC)


def test_chunks_have_a_type_for_every_kind() -> None:
    chunks = rows([full_conversation(), legacy_conversation()], "chunks")
    summary = [(c["turn_index"], c["message_index"], c["chunk_index"], c["chunk_type"]) for c in chunks]
    assert summary == [
        (0, 0, 0, "transcript"),
        (0, 0, 1, "blob"),
        (0, 1, 0, "tool_call"),
        (0, 1, 1, "tool_response"),
        (0, 1, 2, "tool_call"),
        (0, 1, 3, "tool_response"),
        (0, 1, 4, "text"),
        (1, 0, 0, "image"),
        (1, 1, 0, "payload"),
        (1, 2, 0, "agent_transfer"),
        (1, 2, 1, "updated_variables"),
        (1, 2, 2, "default_variables"),
        (1, 2, 3, "hologram"),
        (1, 2, 4, None),
        (None, 0, 0, "text"),
        (None, 0, 1, "tool_call"),
    ]
    by_type = {c["chunk_type"]: c for c in chunks}
    assert by_type["transcript"]["text"] == "where is my order"
    assert (by_type["blob"]["mime_type"], by_type["blob"]["data_bytes"]) == ("audio/wav", 5)
    assert (by_type["image"]["data_bytes"], by_type["image"]["alt_text"]) == (3, "a")
    assert json.loads(by_type["payload"]["payload"]) == {"card": {"title": "Order"}}
    assert json.loads(by_type["updated_variables"]["payload"]) == {"order_id": "42"}
    assert json.loads(by_type["default_variables"]["payload"]) == {"tier": "gold"}
    assert json.loads(by_type["hologram"]["payload"]) == {"frames": 3}


def test_tool_calls_and_responses() -> None:
    calls = rows([full_conversation(), legacy_conversation()], "tool_calls")
    assert [(c["turn_index"], c["chunk_index"], c["tool_call_id"]) for c in calls] == [
        (0, 0, "call-1"),
        (0, 2, "call-2"),
        (None, 1, "legacy-call"),
    ]
    assert calls[0]["tool"] == f"{APP}/tools/lookup_order"
    assert json.loads(calls[0]["args"]) == {"id": 42}
    assert (calls[1]["tool"], calls[1]["toolset"], calls[1]["toolset_tool_id"]) == (
        None,
        f"{APP}/toolsets/crm",
        "get_customer",
    )
    assert (calls[1]["parent_tool_call_id"], calls[1]["agent_name"], calls[1]["target_app"]) == (
        "call-1",
        "Billing Agent",
        "PROJECT",
    )
    assert calls[2]["args"] is None
    responses = rows([full_conversation()], "tool_responses")
    assert [(r["tool_call_id"], r["is_error"]) for r in responses] == [("call-1", False), ("call-2", True)]
    assert json.loads(responses[0]["response"]) == {"output": {"status": "shipped"}}
    assert responses[1]["target_app"] is None


def test_agent_transfers() -> None:
    (transfer,) = rows([full_conversation()], "agent_transfers")
    assert transfer == {
        "conversation_name": conversation_name("c1"),
        "turn_index": 1,
        "message_index": 2,
        "chunk_index": 0,
        "target_agent": f"{APP}/agents/billing",
        "display_name": "Billing",
    }


def test_spans_are_walked_in_pre_order_with_parents_and_depths() -> None:
    spans = rows([full_conversation()], "spans")
    assert [(s["span_id"], s["parent_span_id"], s["depth"], s["name"]) for s in spans] == [
        (0, None, 0, "Turn"),
        (1, 0, 1, "LLM"),
        (2, 1, 2, "Tool"),
        (3, 0, 1, "TTS"),
    ]
    assert spans[2]["duration_seconds"] == 1e-9
    assert json.loads(spans[0]["attributes"]) == {"perceived latency (ms)": 1200, "input types": ["audio"]}
    assert spans[3]["attributes"] is None and spans[3]["start_time"] is None


@pytest.mark.parametrize("depth", [1000, 10_000])
def test_very_deep_span_trees_flatten_without_recursion(depth: int) -> None:
    root: dict = {"name": "level-0", "duration": "1s"}
    node = root
    for level in range(1, depth):
        child = {"name": f"level-{level}", "duration": "0.001s"}
        node["childSpans"] = [child]
        node = child
    conversation = {
        "name": conversation_name("deep"),
        "startTime": "2026-11-01T00:00:00Z",
        "turns": [{"rootSpan": root}],
    }
    spans = rows([conversation], "spans")
    assert len(spans) == depth
    assert spans[-1]["depth"] == depth - 1 and spans[-1]["parent_span_id"] == depth - 2
    assert rows([conversation], "turns")[0]["span_count"] == depth


def test_omitted_zero_counts_and_numeric_strings() -> None:
    minimal = {"name": conversation_name("m"), "startTime": "2026-11-01T00:00:00Z"}
    (row,) = rows([minimal], "conversations")
    assert row["turn_count"] == 0 and row["input_types"] == [] and row["end_time"] is None
    assert row["duration_seconds"] is None
    as_string = dict(minimal, turnCount="3")
    assert rows([as_string], "conversations")[0]["turn_count"] == 3


def test_unknown_enum_values_are_kept_verbatim() -> None:
    conversation = dict(full_conversation(), source="FUTURE_SOURCE", inputTypes=["INPUT_TYPE_SMELL"])
    (row,) = rows([conversation], "conversations")
    assert (row["source"], row["input_types"]) == ("FUTURE_SOURCE", ["INPUT_TYPE_SMELL"])


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        (("name",), None, "name"),
        (("startTime",), "not a time", "startTime"),
        (("turnCount",), "many", "turnCount"),
        (
            ("turns", 0, "rootSpan", "childSpans", 0, "childSpans", 0, "duration"),
            "fast",
            "turns\\[0\\].span.duration",
        ),
        (("turns", 0, "messages", 0, "chunks", 1, "blob", "data"), "***not base64***", "invalid base64"),
        (
            ("turns", 1, "messages", 1, "chunks", 0, "payload"),
            ["not", "a", "struct"],
            r"^turns\[1\]\.messages\[1\]\.chunks\[0\]\.payload: ",
        ),
        (("turns", 0, "messages"), {"not": "a list"}, "messages"),
        (("languageCode",), 7, "languageCode"),
    ],
)
def test_a_bad_conversation_is_rejected_whole_and_the_batch_loads(path, value, reason) -> None:
    good = full_conversation("good")
    bad = with_changes(full_conversation("bad"), path, value)
    tables, rejects = flatten_conversations([good, bad, full_conversation("good2")])
    assert len(rejects) == 1
    assert rejects[0].raw is not None and rejects[0].source == "conversation"
    assert re.search(reason, rejects[0].reason), rejects[0].reason
    names = {conversation_name("good"), conversation_name("good2")}
    for spec in CONVERSATION_TABLES:
        assert set(tables[spec.name].column("conversation_name").to_pylist()) == names, spec.name
    assert tables["spans"].num_rows == 8


def test_take_batches_empties_the_flattener() -> None:
    flattener = ConversationFlattener()
    assert flattener.add(full_conversation("a"))
    assert flattener.add(full_conversation("b"))
    assert len(flattener) == 2
    first = flattener.take_batches()
    assert first["conversations"].num_rows == 2 and first["spans"].num_rows == 8
    assert len(flattener) == 0
    empty = flattener.take_batches()
    assert all(batch.num_rows == 0 for batch in empty.values())
    assert isinstance(empty["spans"], pa.RecordBatch)


@pytest.mark.parametrize(
    ("start", "end", "seconds"),
    [
        ("2026-11-01T10:00:00.123456789Z", "2026-11-01T10:00:01.000000001Z", 0.876543212),
        ("2026-11-01T10:00:00.000000999Z", "2026-11-01T10:00:00.000001Z", 1e-9),
        ("2026-11-01T11:00:00.5+01:00", "2026-11-01T10:00:02.25Z", 1.75),
        # Beyond int64 nanoseconds (1677 to 2262), which protobuf's 0001 to 9999 allows.
        ("2263-01-01T00:00:00.000000001Z", "2263-01-01T00:00:02Z", 1.999999999),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:01:00.5Z", 60.5),
    ],
)
def test_conversation_duration_is_exact_to_the_nanosecond(start, end, seconds) -> None:
    item = ConversationFlattener()
    assert item.add({"name": conversation_name("ns"), "startTime": start, "endTime": end})
    (row,) = item.take_batches()["conversations"].to_pylist()
    assert row["duration_seconds"] == seconds
    assert row["start_time"].year == int(start[:4])


def test_a_chunk_member_sent_as_null_is_absent() -> None:
    """proto3 JSON reads `null` as "not sent": the member that was sent decides the kind."""
    call = {"id": "x1", "tool": f"{APP}/tools/t", "args": {"q": 1}}
    chunks = [
        {"text": None, "toolCall": call},
        {"blob": None, "payload": None, "transcript": "hi"},
        {"payload": None, "hologram": None, "futureKind": {"a": 1}},
        {"text": None},
    ]
    conversation = {
        "name": conversation_name("nulls"),
        "startTime": "2026-11-01T10:00:00Z",
        "turns": [{"messages": [{"role": "agent", "chunks": chunks}]}],
    }
    tables, rejects = flatten_conversations([conversation])
    assert rejects == []
    kinds = [(c["chunk_type"], c["text"], c["payload"]) for c in tables["chunks"].to_pylist()]
    assert kinds == [
        ("tool_call", None, None),
        ("transcript", "hi", None),
        ("futureKind", None, '{"a":1}'),
        (None, None, None),
    ]
    (row,) = tables["tool_calls"].to_pylist()
    assert (row["tool_call_id"], json.loads(row["args"])) == ("x1", {"q": 1})


@pytest.mark.parametrize(
    "data",
    ["aGVs\nbG8=", "aGVsbG8", "aGVs bG8=\r\n", "aGVs\nbG8"],
)
def test_base64_is_read_as_protobuf_json_parsers_read_it(data: str) -> None:
    """Line breaks (MIME style), missing padding and the URL-safe alphabet are all base64."""
    chunk = {"blob": {"mimeType": "audio/wav", "data": data}}
    conversation = with_changes(full_conversation(), ("turns", 0, "messages", 0, "chunks", 1), chunk)
    tables, rejects = flatten_conversations([conversation])
    assert rejects == []
    blob = next(c for c in tables["chunks"].to_pylist() if c["chunk_type"] == "blob")
    assert blob["data_bytes"] == 5


def test_url_safe_base64_is_decoded_to_its_size() -> None:
    chunk = {"image": {"mimeType": "image/png", "data": "-_-_"}}  # bytes fb ff bf
    conversation = with_changes(full_conversation(), ("turns", 1, "messages", 0, "chunks", 0), chunk)
    tables, rejects = flatten_conversations([conversation])
    assert rejects == [] and [
        c["data_bytes"] for c in tables["chunks"].to_pylist() if c["chunk_type"] == "image"
    ] == [3]


def test_a_conversation_with_a_compact_offset_and_a_leap_second_loads() -> None:
    conversation = dict(
        full_conversation(), startTime="2016-12-31T23:59:60Z", endTime="2017-01-01T05:30:10+0530"
    )
    tables, rejects = flatten_conversations([conversation])
    assert rejects == []
    (row,) = tables["conversations"].to_pylist()
    assert row["start_time"] == datetime(2017, 1, 1, tzinfo=UTC)
    assert row["end_time"] == datetime(2017, 1, 1, 0, 0, 10, tzinfo=UTC) and row["duration_seconds"] == 10.0
