"""Bad input end to end: the simulator serves objects that break the schema, one flaw each, and a
Dagster ingest must load everything else, put each bad object in `rejects` (source, resource
name, reason, raw JSON) and count them in the materializations' metadata.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import orjson
import pytest
from dagster_runs import run_partitions

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus import ConversationKey, conversation
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.protojson import deepjson
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import run_query

SCALE = SimulatorScale(seed=17, apps=1, days=1, conversations_per_day=16, max_turns=2)
APP = SCALE.app_names[0]
DEPTH = 10_000
GIGANTIC = 4_000_000


def names() -> list[str]:
    return [conversation(SCALE, ConversationKey(0, 0, i))["name"] for i in range(SCALE.conversations_per_day)]


def deep_tree(depth: int, *, bad_leaf: bool = False) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "Turn", "duration": "2s", "attributes": {"level": 0}}
    node = root
    for level in range(1, depth):
        child = {"name": "LLM", "duration": "0.000001s", "attributes": {"level": level}}
        node["childSpans"] = [child]
        node = child
    if bad_leaf:
        node["startTime"] = "the day after tomorrow"
    return root


def first_turn(c: dict[str, Any]) -> dict[str, Any]:
    return c["turns"][0]


def set_span_duration(c: dict[str, Any]) -> None:
    first_turn(c)["rootSpan"]["duration"] = "fast"


def add_chunk(chunk: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(c: dict[str, Any]) -> None:
        first_turn(c)["messages"][0]["chunks"].append(chunk)

    return change


def deep_attributes(c: dict[str, Any]) -> None:
    value: Any = "bottom"
    for _ in range(400):
        value = {"nested": value}
    first_turn(c)["rootSpan"]["attributes"] = value


# (change, reason the reject gives; None when the object must load)
FLAWS: list[tuple[str, Callable[[dict[str, Any]], None], str | None]] = [
    ("unparseable endTime", lambda c: c.update(endTime="yesterday-ish"), r"^endTime: "),
    ("unparseable startTime", lambda c: c.update(startTime="not a time"), r"unparseable startTime"),
    (
        "unparseable span duration",
        set_span_duration,
        r"^turns\[0\]\.(rootSpan|span)\.duration: not a protobuf duration",
    ),
    ("turnCount of the wrong type", lambda c: c.update(turnCount="many"), r"^turnCount: expected an integer"),
    (
        "languageCode of the wrong type",
        lambda c: c.update(languageCode=7),
        r"^languageCode: expected `str",
    ),
    ("missing name", lambda c: c.pop("name"), r"conversation has no name"),
    (
        "chunks not an array",
        lambda c: first_turn(c)["messages"][0].update(chunks="oops"),
        r"chunks: expected",
    ),
    (
        "invalid base64",
        add_chunk({"blob": {"mimeType": "audio/wav", "data": "***not base64***"}}),
        r"blob\.data: invalid base64",
    ),
    (
        "deep span tree with a bad leaf",
        lambda c: first_turn(c).update(rootSpan=deep_tree(DEPTH, bad_leaf=True)),
        r"span\.startTime",
    ),
    # These are not flaws: they must load.
    ("unknown chunk kind", add_chunk({"hologram": {"frames": 3}}), None),
    ("gigantic string", lambda c: first_turn(c).update(userIntendedText="x" * GIGANTIC), None),
    ("10,000-deep span tree", lambda c: first_turn(c).update(rootSpan=deep_tree(DEPTH)), None),
    ("400-deep span attributes", deep_attributes, None),
    ("enums as numbers", lambda c: c.update(source=1, channelType=2, inputTypes=[1, 99]), None),
    ("a null member beside the sent one", add_chunk({"text": None, "toolCall": {"id": "sent-call"}}), None),
    ("base64 with line breaks", add_chunk({"blob": {"mimeType": "audio/wav", "data": "aGVs\nbG8="}}), None),
]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, Any, dict[str, str]]:
    root = tmp_path_factory.mktemp("rejects")
    by_name = dict(zip(names(), FLAWS, strict=False))
    assert len(by_name) == len(FLAWS)

    def corrupt(served: dict[str, Any]) -> dict[str, Any]:
        flaw = by_name.get(served.get("name", ""))
        if flaw is None:
            return served
        changed = copy.deepcopy(served)
        flaw[1](changed)
        return changed

    config = SimulatorConfig(scale=SCALE, summary_fraction=0.0, faults=SimulatedFaults(corrupt=corrupt))
    monkeypatch = pytest.MonkeyPatch()
    try:
        with running_simulator(config) as sim:
            for name, value in {
                "CES_MCP_URL": sim.url,
                "CES_APPS": APP,
                "CES_LAKE": str(root / "lake"),
                "CES_WAREHOUSE": str(root / "warehouse.duckdb"),
                "CES_MAX_RPS": "1000",
            }.items():
                monkeypatch.setenv(name, value)
            (outcome,) = run_partitions(
                "ingest_conversations",
                [(APP, SCALE.start_date)],
                instance=dg.DagsterInstance.ephemeral(),
            )
    finally:
        monkeypatch.undo()
    assert outcome.error is None
    return (
        Warehouse(str(root / "warehouse.duckdb")),
        outcome,
        {flaw[0]: name for name, flaw in by_name.items()},
    )


def rejects(warehouse: Warehouse) -> list[tuple[Any, ...]]:
    with warehouse.connect(read_only=True) as conn:
        return conn.execute(
            "SELECT source, resource_name, reason, raw_json, app, partition_date FROM rejects"
        ).fetchall()


def test_each_bad_object_is_one_reject_with_its_reason_and_raw_json(ingested) -> None:
    warehouse, _, name_of = ingested
    found = rejects(warehouse)
    bad = [(label, reason) for label, _, reason in FLAWS if reason is not None]
    assert len(found) == len(bad)
    for label, reason in bad:
        expected_name = None if label == "missing name" else name_of[label]
        matches = [row for row in found if row[1] == expected_name and re.search(reason, row[2])]
        assert len(matches) == 1, (label, [(r[1], r[2][:80]) for r in found])
        source, _, _, raw_json, app, day = matches[0]
        assert (source, app, day) == ("conversation", APP, SCALE.start_date)
        assert raw_json is not None
        raw = deepjson.loads(raw_json)
        assert raw.get("startTime") or label == "unparseable startTime"
        if label == "missing name":
            assert "name" not in raw
        else:
            assert raw["name"] == expected_name


def test_the_rejects_query_lists_each_reject_with_its_reason(ingested) -> None:
    warehouse, _, _ = ingested
    columns, rows = run_query(warehouse, "rejects")
    listed = [dict(zip(columns, row, strict=True)) for row in rows]
    assert Counter((row["resource_name"], row["reason"]) for row in listed) == Counter(
        (row[1], row[2]) for row in rejects(warehouse)
    )
    assert {(row["day"], row["app"], row["source"]) for row in listed} == {
        (SCALE.start_date, APP, "conversation")
    }
    assert len(
        run_query(warehouse, "rejects", {"app": APP.rsplit("/", 1)[1], "source": "conversation"})[1]
    ) == len(listed)
    day_after = str(SCALE.start_date + timedelta(days=1))
    for params in ({"source": "evaluation_run"}, {"since": day_after}):
        assert run_query(warehouse, "rejects", params)[1] == [], params


def test_the_deep_reject_keeps_its_whole_tree(ingested) -> None:
    warehouse, _, name_of = ingested
    (raw_json,) = [
        row[3] for row in rejects(warehouse) if row[1] == name_of["deep span tree with a bad leaf"]
    ]
    node, depth = deepjson.loads(raw_json)["turns"][0]["rootSpan"], 1
    while "childSpans" in node:
        node, depth = node["childSpans"][0], depth + 1
    assert depth == DEPTH and node["startTime"] == "the day after tomorrow"


def test_everything_else_loads(ingested) -> None:
    warehouse, _, name_of = ingested
    rejected = {
        name_of[label] for label, _, reason in FLAWS if reason is not None and label != "missing name"
    }
    with warehouse.connect(read_only=True) as conn:
        loaded = {row[0] for row in conn.execute("SELECT conversation_name FROM conversations").fetchall()}
        chunk_types = dict(
            conn.execute(
                "SELECT conversation_name, chunk_type FROM chunks WHERE chunk_type = 'hologram'"
            ).fetchall()
        )
        text_length = conn.execute(
            "SELECT length(user_intended_text) FROM turns WHERE conversation_name = ? AND turn_index = 0",
            [name_of["gigantic string"]],
        ).fetchone()[0]
        deep = conn.execute(
            "SELECT count(*), max(depth), count(DISTINCT parent_span_id) FROM spans "
            "WHERE conversation_name = ? AND turn_index = 0",
            [name_of["10,000-deep span tree"]],
        ).fetchone()
        span_count = conn.execute(
            "SELECT span_count FROM turns WHERE conversation_name = ? AND turn_index = 0",
            [name_of["10,000-deep span tree"]],
        ).fetchone()[0]
        attributes = conn.execute(
            "SELECT attributes FROM spans WHERE conversation_name = ? AND turn_index = 0 AND span_id = 0",
            [name_of["400-deep span attributes"]],
        ).fetchone()[0]
    assert loaded == set(names()) - rejected - {name_of["missing name"]}
    assert len(loaded) == SCALE.conversations_per_day - sum(reason is not None for _, _, reason in FLAWS)
    assert chunk_types == {name_of["unknown chunk kind"]: "hologram"}
    assert text_length == GIGANTIC
    assert deep == (DEPTH, DEPTH - 1, DEPTH - 1) and span_count == DEPTH
    assert deepjson.dumps(deepjson.loads(attributes)).count(b"nested") == 400


def test_the_rejects_are_counted_in_the_materializations(ingested) -> None:
    _, outcome, _ = ingested
    bad = sum(reason is not None for _, _, reason in FLAWS)
    assert outcome.value("lake__conversation_tables", "rejects_rows") == bad
    assert outcome.value("warehouse__conversation_tables", "rejects_rows") == bad
    assert (
        outcome.value("warehouse__conversation_tables", "conversations_rows")
        == SCALE.conversations_per_day - bad
    )


def test_the_raw_lake_keeps_every_object_as_received(ingested) -> None:
    warehouse, _, name_of = ingested
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    lake = Lake(str(Path(warehouse.path).parent / "lake"))
    served = [
        item
        for record in lake.read_jsonl(lake.raw_path(CONVERSATIONS_DATASET, APP, SCALE.start_date))
        for item in record["result"].get("conversations", [])
    ]
    assert len(served) == SCALE.conversations_per_day
    node = next(item for item in served if item.get("name") == name_of["10,000-deep span tree"])
    node, depth = node["turns"][0]["rootSpan"], 1
    while "childSpans" in node:
        node, depth = node["childSpans"][0], depth + 1
    assert depth == DEPTH
    missing = next(item for item in served if "name" not in item)
    assert orjson.loads(orjson.dumps(missing))["startTime"]


def test_what_proto3_json_parsers_accept_loads_as_they_read_it(ingested) -> None:
    """Served over the wire and loaded by a Dagster run: enum numbers, null members, MIME base64."""
    warehouse, _, name_of = ingested
    with warehouse.connect(read_only=True) as conn:
        enums = conn.execute(
            "SELECT source, channel_type, input_types FROM conversations WHERE conversation_name = ?",
            [name_of["enums as numbers"]],
        ).fetchall()
        call = conn.execute(
            "SELECT tool_call_id FROM tool_calls WHERE conversation_name = ?",
            [name_of["a null member beside the sent one"]],
        ).fetchall()
        blob = conn.execute(
            "SELECT data_bytes FROM chunks WHERE conversation_name = ? AND mime_type = 'audio/wav' "
            "AND data_bytes = 5",
            [name_of["base64 with line breaks"]],
        ).fetchall()
    assert enums == [("LIVE", "AUDIO", ["INPUT_TYPE_TEXT", "99"])]
    assert ("sent-call",) in call
    assert blob == [(5,)]
