"""The daily rollups a load keeps equal what they would be if computed from the whole warehouse."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest
import trend_samples
from conversation_samples import APP, full_conversation
from test_warehouse import DAY, NEXT_DAY, OTHER_APP, write_partition

from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.warehouse import loads, rollups
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.metric_scores import SCORES
from pipelines.warehouse.rollups import rollup_names

SCORED = (
    "SELECT day, app, metric, round(value, 9), round(baseline_median, 9), round(baseline_mad, 9), "
    f"baseline_days FROM {SCORES}"
)
"""The metric scores, to 9 decimals: a sum of doubles differs in its last bits with its order."""


def rollup_rows(warehouse: Warehouse) -> dict[str, list[tuple]]:
    with warehouse.connect(read_only=True) as conn:
        found = {
            name: sorted(conn.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
            for name in rollup_names()
        }
        return {**found, SCORES: sorted(conn.execute(SCORED).fetchall(), key=repr)}


def from_scratch(tmp_path: Path, lake: Lake, partitions: list[tuple[str, date]]) -> dict[str, list[tuple]]:
    """The rollups of one load of the lake's current partitions into an empty warehouse."""
    fresh = Warehouse(str(tmp_path / f"fresh-{len(list(tmp_path.iterdir()))}.duckdb"))
    load_conversation_partitions(lake, fresh, partitions)
    return rollup_rows(fresh)


def as_an_older_release_left_it(conn: duckdb.DuckDBPyConnection, rollup: str) -> None:
    """The rollup as a table in the file (where releases before its parts kept it), with no rows
    and another definition."""
    conn.execute(f"DROP VIEW {rollup}")
    conn.execute(f"CREATE TABLE {rollup} AS FROM parts.{rollup} LIMIT 0")
    conn.execute("UPDATE rollup_definitions SET definition = 'older' WHERE rollup = ?", [rollup])


def conversation(conversation_id: str, start: str, **changes: object) -> dict:
    return dict(full_conversation(conversation_id, start=start), **changes)


def test_loads_keep_the_rollups_of_every_partition_they_touch(tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    warehouse = Warehouse(str(tmp_path / "kept.duckdb"))
    day_one = [conversation("a", "2026-11-01T10:00:00Z"), conversation("m", "2026-11-01T23:00:00Z")]
    write_partition(lake, APP, DAY, day_one)
    write_partition(lake, APP, NEXT_DAY, [conversation("n", "2026-11-02T08:00:00Z", source="EVAL")])
    other = conversation("o", "2026-11-01T12:00:00Z", name=f"{OTHER_APP}/conversations/o")
    write_partition(lake, OTHER_APP, DAY, [other])
    everything = [(APP, DAY), (APP, NEXT_DAY), (OTHER_APP, DAY)]
    load_conversation_partitions(lake, warehouse, everything)
    loaded = rollup_rows(warehouse)
    assert loaded == from_scratch(tmp_path, lake, everything)
    with warehouse.connect(read_only=True) as conn:
        days = conn.execute(
            "SELECT day, app, conversations FROM daily_conversation_length ORDER BY ALL"
        ).fetchall()
    assert days == [(DAY, OTHER_APP, 1), (DAY, APP, 2), (NEXT_DAY, APP, 1)]

    # A partition replaced with a conversation changed: its rows change, the others' stay.
    shorter = conversation("a", "2026-11-01T10:00:00Z", source="SIMULATOR", turnCount=1)
    shorter["turns"] = shorter["turns"][:1]
    write_partition(lake, APP, DAY, [shorter, day_one[1]])
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    replaced = rollup_rows(warehouse)
    assert replaced == from_scratch(tmp_path, lake, everything)
    assert replaced["daily_conversations"] != loaded["daily_conversations"]
    assert replaced["daily_conversation_length"] != loaded["daily_conversation_length"]

    # A conversation whose start moved to the next day, loaded with that day only: the day it
    # left is computed again without it.
    write_partition(lake, APP, DAY, [shorter])
    write_partition(
        lake,
        APP,
        NEXT_DAY,
        [conversation("n", "2026-11-02T08:00:00Z", source="EVAL"), conversation("m", "2026-11-02T00:30:00Z")],
    )
    load_conversation_partitions(lake, warehouse, [(APP, NEXT_DAY)])
    assert rollup_rows(warehouse) == from_scratch(tmp_path, lake, everything)
    with warehouse.connect(read_only=True) as conn:
        moved = conn.execute(
            "SELECT day, sum(conversations) FROM daily_conversations WHERE app = ? GROUP BY day ORDER BY day",
            [APP],
        ).fetchall()
    assert moved == [(DAY, 1), (NEXT_DAY, 2)]

    # The same window again leaves the same rows.
    load_conversation_partitions(lake, warehouse, everything)
    assert rollup_rows(warehouse) == from_scratch(tmp_path, lake, everything)

    # A day of a folded week loaded again (late data): a day part, its rows in the folded part hidden.
    later = DAY + timedelta(days=20)
    write_partition(lake, APP, later, [conversation("l", f"{later}T09:00:00Z")])
    load_conversation_partitions(lake, warehouse, [(APP, later)])  # DAY and NEXT_DAY folded into a week
    write_partition(lake, APP, DAY, [shorter, conversation("p", "2026-11-01T15:00:00Z", source="EVAL")])
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    with warehouse.connect(read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM warehouse_hidden_days").fetchone()[0] > 0
    assert rollup_rows(warehouse) == from_scratch(tmp_path, lake, [*everything, (APP, later)])


def test_a_rollup_whose_definition_changed_is_computed_again_from_every_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    lake = Lake(str(tmp_path / "lake"))
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    write_partition(lake, APP, DAY, [conversation("a", "2026-11-01T10:00:00Z")])
    write_partition(lake, APP, NEXT_DAY, [conversation("b", "2026-11-02T10:00:00Z")])
    load_conversation_partitions(lake, warehouse, [(APP, DAY), (APP, NEXT_DAY)])
    expected = rollup_rows(warehouse)
    with warehouse.connect() as conn:
        as_an_older_release_left_it(conn, "daily_component_latency")
        (old_part,) = conn.execute(
            "SELECT file FROM warehouse_parts WHERE relation = 'daily_component_latency'"
        ).fetchone()
    assert rollup_rows(warehouse)["daily_component_latency"] == []

    with warehouse.connect() as conn:
        monkeypatch.setattr(loads, "_SCHEMA_ENSURED", set())  # a file whose inode was set up before
        warehouse.ensure_schema(conn)  # what the next load or `ces-pipeline rebuild` does first

    assert rollup_rows(warehouse) == expected and expected["daily_component_latency"]
    with warehouse.connect(read_only=True) as conn:  # a view of one new part, the old one retired
        assert conn.execute(
            "SELECT table_type FROM information_schema.tables "
            "WHERE table_schema = 'main' AND table_name = 'daily_component_latency'"
        ).fetchall() == [("VIEW",)]
        listed = conn.execute(
            "SELECT app, partition_date FROM warehouse_parts WHERE relation = 'daily_component_latency'"
        ).fetchall()
        assert listed == [(APP, DAY.replace(day=1))]
        retired = [file for (file,) in conn.execute("SELECT file FROM warehouse_retired_parts").fetchall()]
        assert old_part in retired
    # minutes over a long history: the command says why before it starts
    assert [record.getMessage() for record in caplog.records if record.levelname == "WARNING"] == [
        "computing daily_component_latency again over the 2 loaded partitions "
        "(into Parquet parts beside the file), once"
    ]


def test_evaluated_conversations_are_kept_whichever_loads_first(tmp_path: Path) -> None:
    """The rollup evaluation_failures and evaluation_tool_trajectories read: an evaluation load
    computes it for the conversations already loaded, a conversation load for those evaluated
    before; either order leaves the same rows, and the views the same answers."""
    after = trend_samples.build_warehouse(tmp_path / "after")[1]
    before = trend_samples.build_warehouse(tmp_path / "before", evaluations_first=True)[1]
    answers = []
    for warehouse in (after, before):
        with warehouse.connect(read_only=True) as conn:
            answers.append(
                [
                    sorted(conn.execute(query).fetchall(), key=repr)
                    for query in (
                        "SELECT * FROM evaluated_conversation_turns",
                        "SELECT * FROM evaluation_failures",
                        SCORED,
                    )
                ]
            )
    assert answers[0] == answers[1]
    # the pass rate of the runs, scored by the evaluation load or by the conversation load after it
    assert {row[2] for row in answers[0][2]} >= {"conversations", "evaluation_pass_rate"}
    with after.connect(read_only=True) as conn:
        found = conn.execute(
            "SELECT DISTINCT conversation_name, conversation_loaded, slowest_span IS NOT NULL "
            "FROM evaluation_failures"
        ).fetchall()
    # the sample's failing result replayed support's second conversation of the first day
    assert found == [(f"{trend_samples.SUPPORT}/conversations/20261101-1", True, True)]


def test_a_rollup_computed_again_over_folded_parts_reads_each_chunk_of_partitions_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """36 days of an app: most of them in folded parts, computed again in two chunks, each through
    views of its own partitions' parts: the same rows as the loads kept."""
    from test_anomalies import _history

    lake, partitions = _history(tmp_path)
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, partitions)
    expected = rollup_rows(warehouse)
    with warehouse.connect(read_only=True) as conn:
        folded = conn.execute("SELECT count(*) FROM warehouse_parts WHERE file LIKE '%/folded/%'").fetchone()
    assert folded[0] > 0
    with warehouse.connect() as conn:
        as_an_older_release_left_it(conn, "daily_conversations")
        conn.execute(  # a new definition of a rollup kept as parts already
            "UPDATE rollup_definitions SET definition = 'older' WHERE rollup = 'daily_trajectories'"
        )
        monkeypatch.setattr(loads, "_SCHEMA_ENSURED", set())  # a file whose inode was set up before
        warehouse.ensure_schema(conn)
    assert rollup_rows(warehouse) == expected and len(expected["daily_conversations"]) == len(partitions)


def test_chunks_keep_each_app_month_whole() -> None:
    """Each (app, month) part is written once a refresh: a chunk never splits an app's month."""
    days = [date(2026, 10, 1) + timedelta(days=n) for n in range(62)]  # October, November, a day of December
    partitions = [(app, day) for app in ("a", "b") for day in days]
    chunks = rollups._chunks(reversed(partitions))
    assert sorted(partition for chunk in chunks for partition in chunk) == sorted(partitions)
    months = [{(app, day.replace(day=1)) for app, day in chunk} for chunk in chunks]
    assert all(not (one & other) for n, one in enumerate(months) for other in months[n + 1 :])
    assert all(len(chunk) <= rollups.CHUNK_PARTITIONS for chunk in chunks)
    assert len(chunks) == 4  # a month (30 or 31 days) a chunk, December's day with November's
