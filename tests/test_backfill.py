"""The bulk backfill: partitions flattened in worker processes and loaded in commit windows hold
exactly the rows that partition-by-partition flatten and load give; a broken partition is
reported without stopping the others, and a failed load keeps the windows committed before it."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from conversation_samples import APP, full_conversation

from pipelines.ingest.backfill import backfill_partitions, flatten_task
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partition
from pipelines.lake.store import Lake
from pipelines.transform.schemas import ALL_TABLES
from pipelines.warehouse.duck import ConversationLoad, Warehouse

FIRST_DAY = date(2026, 11, 1)
DAYS = [FIRST_DAY + timedelta(days=i) for i in range(4)]


def page(conversations: list[dict]) -> dict:
    return {
        "tool": "list_conversations",
        "arguments": {"parent": APP, "pageSize": 100},
        "result": {"conversations": conversations},
        "fetched_at": "2026-11-05T00:00:00Z",
    }


def raw_lake(root: Path) -> Lake:
    lake = Lake(str(root))
    for index, day in enumerate(DAYS):
        start = f"{day.isoformat()}T10:00:00Z"
        conversations = [full_conversation(f"{day:%Y%m%d}-{n}", start=start) for n in range(index + 1)]
        lake.write_raw(CONVERSATIONS_DATASET, APP, day, [page([*conversations, {"name": "broken"}])])
    return lake


def contents(warehouse: Warehouse) -> dict[str, list[tuple]]:
    with warehouse.connect(read_only=True) as conn:
        return {
            spec.name: sorted(conn.execute(f"SELECT * FROM {spec.name}").fetchall(), key=repr)
            for spec in ALL_TABLES
        }


@pytest.mark.parametrize("commit_conversations", [1, 10_000_000], ids=["a-commit-per-insert", "one-commit"])
def test_a_backfill_equals_partition_by_partition_runs(tmp_path: Path, commit_conversations: int) -> None:
    reference_lake, lake = raw_lake(tmp_path / "reference"), raw_lake(tmp_path / "lake")
    reference = Warehouse(str(tmp_path / "reference.duckdb"))
    for day in DAYS:
        flatten_conversation_partition(reference_lake, APP, day)
        load_conversation_partition(reference_lake, reference, APP, day)
    warehouse = Warehouse(str(tmp_path / "warehouse.duckdb"))
    groups: list[list[tuple[str, date]]] = []

    result = backfill_partitions(
        lake,
        warehouse,
        [(APP, day) for day in DAYS],
        workers=2,
        commit_conversations=commit_conversations,
        on_loaded=lambda group, _inserted: groups.append(group),
    )

    assert contents(warehouse) == contents(reference)
    assert result.loaded["conversations"] == 1 + 2 + 3 + 4 and result.loaded["rejects"] == 4
    assert {p: s["rows"]["conversations"] for p, s in result.partitions.items()} == {
        (APP, day): index + 1 for index, day in enumerate(DAYS)
    }
    assert sorted(p for group in groups for p in group) == [(APP, day) for day in DAYS]
    assert result.loads == len(groups)
    assert result.commits == (result.loads if commit_conversations == 1 else 1)
    again = backfill_partitions(
        lake, warehouse, [(APP, day) for day in DAYS], workers=2, commit_conversations=commit_conversations
    )
    assert again.loaded == result.loaded and contents(warehouse) == contents(reference)  # idempotent


def test_a_broken_partition_is_reported_and_the_others_are_loaded(tmp_path: Path) -> None:
    lake = raw_lake(tmp_path / "lake")
    Path(lake.raw_path(CONVERSATIONS_DATASET, APP, DAYS[1])).write_bytes(b"this is not gzip")
    warehouse = Warehouse(str(tmp_path / "warehouse.duckdb"))

    result = backfill_partitions(lake, warehouse, [(APP, day) for day in DAYS], workers=2)

    assert list(result.failed) == [(APP, DAYS[1])]
    assert "gzip" in result.failed[(APP, DAYS[1])].lower()
    assert warehouse.row_counts()["conversations"] == 1 + 3 + 4
    assert sorted(result.partitions) == [(APP, day) for day in DAYS if day != DAYS[1]]


def test_workers_from_a_fork_server_give_the_same_rows(tmp_path: Path) -> None:
    """The start method a process with threads gets: a fork server holding the modules."""
    partitions = [(APP, day) for day in DAYS]
    by_fork, by_server = Warehouse(str(tmp_path / "fork.duckdb")), Warehouse(str(tmp_path / "server.duckdb"))
    backfill_partitions(raw_lake(tmp_path / "a"), by_fork, partitions, workers=2, start_method="fork")

    result = backfill_partitions(
        raw_lake(tmp_path / "b"), by_server, partitions, workers=2, start_method="forkserver"
    )

    assert not result.failed and result.loaded["conversations"] == 10
    assert contents(by_server) == contents(by_fork)


def flatten_then_lose_spans_of_the_third_day(lake_root: str, app: str, day: date) -> dict:
    """A worker task whose third partition cannot be loaded: its spans file is gone."""
    summary = flatten_task(lake_root, app, day)
    if day == DAYS[2]:
        lake = Lake(lake_root)
        Path(lake.table_path("spans", app, day)).unlink()
    return summary


@pytest.mark.parametrize(
    "commit_conversations", [1, 10_000_000], ids=["windows-before-kept", "window-undone"]
)
def test_a_failed_load_keeps_the_windows_committed_before_it(
    tmp_path: Path, commit_conversations: int
) -> None:
    lake = raw_lake(tmp_path / "lake")
    warehouse = Warehouse(str(tmp_path / "warehouse.duckdb"))
    inserted: list[date] = []

    with pytest.raises(FileNotFoundError, match="spans"):
        backfill_partitions(
            lake,
            warehouse,
            [(APP, day) for day in DAYS],
            workers=1,  # partitions finish one by one, the largest (last) day first; the third
            # day, second in line, cannot be loaded
            task=flatten_then_lose_spans_of_the_third_day,
            commit_conversations=commit_conversations,
            on_loaded=lambda group, _rows: inserted.extend(day for _, day in group),
        )

    assert inserted == [DAYS[3]]
    committed = inserted if commit_conversations == 1 else []
    expected = sum(DAYS.index(day) + 1 for day in committed)
    with warehouse.connect(read_only=True) as conn:  # every table holds the same conversations
        names = {
            table: conn.execute(f"SELECT count(DISTINCT conversation_name) FROM {table}").fetchone()[0]
            for table in ("conversations", "turns", "spans")
        }
    assert names == {"conversations": expected, "turns": expected, "spans": expected}
    assert warehouse.row_counts()["rejects"] == len(committed)


def flatten_and_note_the_day(lake_root: str, app: str, day: date) -> dict:
    """flatten_task, noting in the lake root's `order` file which day it started."""
    with open(Path(lake_root) / "order", "a") as order:
        order.write(f"{day}\n")
    return flatten_task(lake_root, app, day)


def test_the_largest_partitions_are_flattened_first(tmp_path: Path) -> None:
    """The partitions are handed out by raw file size, the days not fetched yet last, ties in
    the order given; a single worker starts them in that order."""
    lake = raw_lake(tmp_path / "lake")  # day i holds i + 1 conversations
    unfetched = [DAYS[-1] + timedelta(days=n) for n in (1, 2)]
    partitions = [(APP, day) for day in (unfetched[0], *DAYS, unfetched[1])]

    result = backfill_partitions(
        lake, Warehouse(str(tmp_path / "w.duckdb")), partitions, workers=1, task=flatten_and_note_the_day
    )

    started = (tmp_path / "lake" / "order").read_text().split()
    assert started == [str(day) for day in (*reversed(DAYS), *unfetched)]
    assert set(result.failed) == {(APP, day) for day in unfetched}  # no raw file: reported
    assert result.loaded["conversations"] == 1 + 2 + 3 + 4


def test_the_loader_runs_on_one_thread_with_a_pool_that_keeps_its_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings the loader is documented to use reach DuckDB: one thread and a 96 MB pool
    whose block memory is kept (`LOADER_DUCKDB_CONFIG`) while the workers run, then every
    core for the last insert."""
    seen: list[tuple[str, ...]] = []
    replace = ConversationLoad.replace

    def noting_settings(load: ConversationLoad, partitions: list) -> dict[str, int]:
        query = (
            "SELECT current_setting('threads'), current_setting('memory_limit'), "
            "current_setting('block_allocator_memory')"
        )
        seen.append(tuple(str(value) for value in load._conn.execute(query).fetchone()))
        return replace(load, partitions)

    monkeypatch.setattr(ConversationLoad, "replace", noting_settings)
    lake = raw_lake(tmp_path / "lake")
    backfill_partitions(lake, Warehouse(str(tmp_path / "w.duckdb")), [(APP, day) for day in DAYS], workers=2)

    assert seen and all(settings[1:] == ("91.5 MiB", "91.5 MiB") for settings in seen)  # 96 MB
    assert [settings[0] for settings in seen[:-1]] == ["1"] * (len(seen) - 1)
    assert seen[-1][0] == "2"
