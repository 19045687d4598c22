"""The columnar flattener against the reference one: the same batches and rejects, value for value.

`ConversationFlattener` (columnar, checks whole columns in Arrow) must never decide differently
from `RowConversationFlattener` (row tuples, every value checked as read). These tests feed both
the simulator's conversations, hand-made ones, and conversations broken in every field the
columnar path checks late, and compare everything they hand out.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pyarrow as pa
import pytest
from conversation_samples import full_conversation, with_changes

from pipelines.ces.simulator.corpus import ConversationKey, SimulatorScale, conversation
from pipelines.transform.conversations import ConversationFlattener, RowConversationFlattener
from pipelines.transform.timeparse import (
    TimeFormatError,
    _utc_nanos,
    duration_column,
    parse_duration_seconds,
    parse_timestamp_micros,
    parse_timestamp_nanos,
    timestamp_column,
)

SCALE = SimulatorScale(conversations_per_day=400, days=2, max_turns=10, span_depth=4)


def simulated(count: int, day: int = 0) -> list[dict[str, Any]]:
    return [conversation(SCALE, ConversationKey(index % 2, day, index)) for index in range(count)]


def flatten_both(conversations: list[Any], batch: int = 50) -> tuple[list, list]:
    """(batches, rejects) from each flattener, taking a batch every `batch` conversations."""
    results = []
    for flattener in (ConversationFlattener(), RowConversationFlattener()):
        batches = []
        for start in range(0, len(conversations), batch):
            for item in conversations[start : start + batch]:
                flattener.add(copy.deepcopy(item))
            batches.append(flattener.take_batches())
        rejects = [(r.source, r.resource_name, r.reason, r.raw) for r in flattener.take_rejects()]
        results.append((batches, rejects))
    return results[0], results[1]


def assert_same(conversations: list[Any], batch: int = 50) -> tuple[list, list]:
    (fast, fast_rejects), (reference, reference_rejects) = flatten_both(conversations, batch)
    assert fast_rejects == reference_rejects
    for fast_batch, reference_batch in zip(fast, reference, strict=True):
        assert fast_batch.keys() == reference_batch.keys()
        for name, expected in reference_batch.items():
            assert fast_batch[name].schema == expected.schema, name
            assert fast_batch[name].equals(expected), name
    return fast, fast_rejects


def test_the_simulators_conversations_flatten_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fallback(self: ConversationFlattener) -> None:
        raise AssertionError("the columnar path handed a valid batch to the reference")

    monkeypatch.setattr(ConversationFlattener, "_reference_batches", no_fallback)
    batches, rejects = assert_same(simulated(300), batch=70)
    assert rejects == []
    assert sum(b["spans"].num_rows for b in batches) > 300 * 20


def test_hand_made_conversations_with_every_chunk_kind_flatten_identically() -> None:
    assert_same([full_conversation("a"), full_conversation("b"), {"name": "broken"}, "junk", None])


BREAKAGES = [
    (("name",), None),
    (("name",), 7),
    (("startTime",), "not a time"),
    (("startTime",), "2026-02-30T00:00:00Z"),
    (("endTime",), "2026-11-01T24:00:00Z"),
    (("endTime",), 20261101),
    (("turnCount",), "many"),
    (("turnCount",), 2**40),
    (("source",), ["LIVE"]),
    (("inputTypes",), "INPUT_TYPE_TEXT"),
    (("inputTypes",), ["INPUT_TYPE_TEXT", 3]),
    (("languageCode",), 7),
    (("turns",), {"not": "a list"}),
    (("turns", 0), "a turn"),
    (("turns", 0, "userIntendedText"), False),
    (("turns", 0, "messages"), {"not": "a list"}),
    (("turns", 0, "messages", 0), 5),
    (("turns", 0, "messages", 0, "role"), 1.5),
    (("turns", 0, "messages", 0, "eventTime"), "yesterday"),
    (("turns", 0, "messages", 0, "chunks", 1, "blob", "data"), "***not base64***"),
    (("turns", 0, "messages", 0, "chunks", 1, "blob"), "blob"),
    (("turns", 0, "messages", 0, "chunks", 0, "transcript"), 12),
    (("turns", 0, "messages", 1, "chunks", 0, "toolCall", "args"), ["not", "a", "struct"]),
    (("turns", 0, "messages", 1, "chunks", 0, "toolCall", "toolsetTool"), "crm"),
    (("turns", 0, "messages", 1, "chunks", 1, "toolResponse", "response"), "text"),
    (("turns", 0, "messages", 1, "chunks", 1, "toolResponse", "id"), 1),
    (("turns", 1, "messages", 1, "chunks", 0, "payload"), ["not", "a", "struct"]),
    (("turns", 1, "messages", 2, "chunks", 0, "agentTransfer", "displayName"), {}),
    (("turns", 0, "rootSpan"), "root"),
    (("turns", 0, "rootSpan", "childSpans"), {"not": "a list"}),
    (("turns", 0, "rootSpan", "childSpans", 0), "child"),
    (("turns", 0, "rootSpan", "childSpans", 0, "childSpans", 0, "duration"), "fast"),
    (("turns", 0, "rootSpan", "childSpans", 0, "childSpans", 0, "duration"), "1.5"),
    (("turns", 0, "rootSpan", "childSpans", 0, "startTime"), "2026-11-01T10:00:00.1234567890Z"),
    (("turns", 0, "rootSpan", "childSpans", 0, "name"), None),
    (("turns", 0, "rootSpan", "attributes"), [1, 2]),
    (("messages", 0, "chunks", 0, "text"), {"text": "nested"}),
]


@pytest.mark.parametrize(("path", "value"), BREAKAGES)
def test_a_broken_conversation_is_rejected_exactly_as_the_reference_does(path, value) -> None:
    good = full_conversation("good")
    bad = with_changes(full_conversation("bad"), path, value)
    assert_same([good, bad, full_conversation("good2")])


def test_json_members_null_or_not_ascii_stay_on_the_columnar_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fallback(self: ConversationFlattener) -> None:
        raise AssertionError("the columnar path handed a valid batch to the reference")

    monkeypatch.setattr(ConversationFlattener, "_reference_batches", no_fallback)
    first, odd, last = simulated(3)
    odd["turns"][0]["rootSpan"]["attributes"] = None  # a JSON null: no attributes
    odd["turns"][0]["rootSpan"]["childSpans"][0]["attributes"] = {"note": 'café ☕ "q"', "n": [1, {}]}
    calls = [c for t in odd["turns"] for m in t["messages"] for c in m["chunks"] if "toolCall" in c]
    calls[0]["toolCall"]["args"] = None
    batches, _ = assert_same([first, odd, last])
    attributes = batches[0]["spans"].column("attributes").to_pylist()
    assert None in attributes and '{"note":"café ☕ \\"q\\"","n":[1,{}]}' in attributes


def test_json_text_past_a_string_columns_reach_goes_to_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    import pipelines.transform.conversations as columnar

    references = []
    reference_batches = ConversationFlattener._reference_batches
    monkeypatch.setattr(columnar, "_MAX_STRING_BYTES", 100)  # as if a batch held 2 GiB of JSON
    monkeypatch.setattr(
        ConversationFlattener,
        "_reference_batches",
        lambda self: references.append(1) or reference_batches(self),
    )
    assert_same(simulated(3))
    assert references


def test_valid_spellings_the_columns_leave_to_the_reference_flatten_identically() -> None:
    odd = full_conversation("odd")
    odd["startTime"] = "0999-01-01T00:00:00Z"  # valid, but not a year the column path vouches for
    odd["turns"][0]["rootSpan"]["childSpans"][0]["duration"] = "٣s"  # Arabic-Indic digit: Python reads 3
    odd["turns"][0]["rootSpan"]["childSpans"][1]["childSpans"] = [None, {}]  # null and empty spans
    odd["turns"][0]["messages"][0]["chunks"].append(None)
    batches, rejects = assert_same([full_conversation("a"), odd, full_conversation("b")])
    assert rejects == []
    assert batches[0]["conversations"].num_rows == 3


def test_rejects_keep_the_order_conversations_were_added() -> None:
    items = simulated(40)
    for index in (3, 17, 30):
        items[index] = with_changes(items[index], ("startTime",), f"bad {index}")
    items[9] = with_changes(items[9], ("name",), None)
    _, rejects = assert_same(items, batch=16)
    assert [reason.split(":")[0] for _, _, reason, _ in rejects] == [
        "startTime",
        "name",
        "startTime",
        "startTime",
    ]


def test_rejects_can_be_taken_before_the_batch() -> None:
    first, second = simulated(2)
    flattener = ConversationFlattener()
    assert flattener.add(first)
    assert flattener.add(with_changes(second, ("endTime",), "soon"))  # found when settled
    assert [r.resource_name for r in flattener.take_rejects()] == [second["name"]]
    batches = flattener.take_batches()
    assert batches["conversations"].column("conversation_name").to_pylist() == [first["name"]]
    assert all(batch.num_rows == 0 for batch in flattener.take_batches().values())


def _reference_or_error(parse, value):
    try:
        return parse(value)
    except TimeFormatError:
        return "error"


def test_timestamp_columns_agree_with_the_per_value_parser_or_decline() -> None:
    rng = random.Random(5)
    values = []
    for _ in range(5000):
        fraction = rng.choice(["", "." + "".join(rng.choices("0123456789", k=rng.randint(1, 9)))])
        zone = rng.choice(["Z", "z", f"{rng.choice('+-')}{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"])
        values.append(
            f"{rng.randint(1000, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            f"{rng.choice('Tt ')}{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            f"{fraction}{zone}"
        )
    column = timestamp_column(pa.array([*values, None]))
    assert column is not None
    assert column.to_pylist() == [*(parse_timestamp_micros(v) for v in values), None]
    for odd in ["2026-02-30T00:00:00Z", "2026-11-01T23:59:60Z", "0000-01-01T00:00:00Z", "x", "1s"]:
        assert timestamp_column(pa.array(["2026-11-01T00:00:00Z", odd])) is None


def test_utc_timestamp_columns_take_the_arrow_cast_and_agree_with_the_per_value_parser() -> None:
    """CES's own spelling (T, Z, 0 to 9 fraction digits) goes through Arrow's ISO 8601 cast;
    values, month lengths and time-of-day limits must be the per-value parser's exactly."""
    rng = random.Random(7)
    values = [
        f"{rng.randint(1970, 2261):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        f"{rng.choice('T ')}{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
        + rng.choice(["", "." + "".join(rng.choices("0123456789", k=rng.randint(1, 9)))])
        + "Z"
        for _ in range(5000)
    ] + ["2024-02-29T23:59:59.999999999Z", "1970-01-01T00:00:00Z"]
    column = pa.array([*values, None])
    assert _utc_nanos(column) is not None
    assert timestamp_column(column).to_pylist() == [*(parse_timestamp_micros(v) for v in values), None]
    assert timestamp_column(column, nanos=True).to_pylist() == [
        *(parse_timestamp_nanos(v) for v in values),
        None,
    ]
    # Spelled otherwise, or before 1970: the general path, with the same values or declined.
    for other in [
        "1969-12-31T23:59:59.9999999Z",
        "0999-01-01T00:00:00Z",
        "2026-11-01t10:00:00Z",
        "2026-11-01T10:00:00.123z",
        "2026-11-01T10:00:00+01:00",
    ]:
        column = pa.array(["2026-11-01T00:00:00Z", other])
        assert _utc_nanos(column) is None
        general = timestamp_column(column)
        assert general is None or general.to_pylist() == [1793491200000000, parse_timestamp_micros(other)]
    for odd in [
        "2026-11-01T10:00Z",
        "2026-11-01T10Z",
        "2023-02-29T10:00:00Z",
        "2026-11-01T24:00:00Z",
        "2026-11-01T10:00:00.Z",
        "2026-11-01T10:00:00,123Z",
        "2026-11-01T10:00:00.1234567891Z",
    ]:
        assert _reference_or_error(parse_timestamp_micros, odd) == "error"
        assert timestamp_column(pa.array(["2026-11-01T00:00:00Z", odd])) is None


def test_duration_columns_agree_with_the_per_value_parser_or_decline() -> None:
    rng = random.Random(6)
    values = [
        f"{rng.choice(['', '-'])}{rng.randint(0, 10 ** rng.randint(0, 12))}"
        f"{rng.choice(['', '.' + ''.join(rng.choices('0123456789', k=rng.randint(1, 9)))])}s"
        for _ in range(5000)
    ]
    column = duration_column(pa.array([*values, None]))
    assert column is not None
    assert [repr(v) for v in column.to_pylist()] == [
        *(repr(parse_duration_seconds(v)) for v in values),
        "None",
    ]
    for odd in ["fast", "1.5", "1.1234567891s", "٣s"]:
        assert duration_column(pa.array(["1s", odd])) is None
        assert _reference_or_error(parse_duration_seconds, odd) in ("error", 3.0)
