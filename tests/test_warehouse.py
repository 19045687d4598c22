"""Warehouse partition loads: replace in one transaction, idempotent, other partitions untouched."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conversation_samples import APP, conversation_name, flatten_conversations, full_conversation

from pipelines.config import ConfigError, Settings, StorageSettings, default_write_memory_limit
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.transform.rejects import rejects_batch
from pipelines.transform.schemas import ALL_TABLES, CONVERSATION_TABLES, REJECTS
from pipelines.warehouse.duck import Warehouse, WarehouseMemoryError

DAY = date(2026, 11, 1)
NEXT_DAY = date(2026, 11, 2)
OTHER_APP = "projects/p1/locations/us/apps/sales"


def write_partition(lake: Lake, app: str, day: date, conversations: list[dict]) -> None:
    tables, rejects = flatten_conversations(conversations)
    for spec in CONVERSATION_TABLES:
        with lake.table_writer(spec, app, day) as writer:
            for batch in tables[spec.name].to_batches():
                writer.write(batch)
    with lake.table_writer(REJECTS, app, day) as writer:
        writer.write(rejects_batch(rejects, app, day))


def snapshot(warehouse: Warehouse) -> dict[str, list[tuple]]:
    with warehouse.connect(read_only=True) as conn:
        return {
            spec.name: sorted(conn.execute(f"SELECT * FROM {spec.name}").fetchall(), key=repr)
            for spec in ALL_TABLES
        }


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(str(tmp_path / "lake"))


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    return Warehouse(str(tmp_path / "warehouse.duckdb"))


def test_loading_a_partition_twice_leaves_the_same_rows(lake: Lake, warehouse: Warehouse) -> None:
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b"), {"name": "broken"}])
    first = load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    (rows,) = first.values()
    assert list(first) == [(APP, DAY)] and (rows["conversations"], rows["spans"], rows["rejects"]) == (
        2,
        8,
        1,
    )
    before = snapshot(warehouse)
    again = load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    assert again == first
    assert snapshot(warehouse) == before
    assert warehouse.row_counts()["conversations"] == 2


def test_a_reload_holds_exactly_the_new_truth_and_spares_other_partitions(
    lake: Lake, warehouse: Warehouse
) -> None:
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b")])
    write_partition(lake, APP, NEXT_DAY, [full_conversation("n", start="2026-11-02T08:00:00Z")])
    write_partition(lake, OTHER_APP, DAY, [])
    for app, day in [(APP, DAY), (APP, NEXT_DAY), (OTHER_APP, DAY)]:
        load_conversation_partitions(lake, warehouse, [(app, day)])
    other_partitions = {
        k: [r for r in rows if conversation_name("n") in repr(r)] for k, rows in snapshot(warehouse).items()
    }

    changed = full_conversation("a")
    changed["turns"] = changed["turns"][:1]
    changed["turnCount"] = 1
    write_partition(lake, APP, DAY, [changed, full_conversation("c")])
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])

    with warehouse.connect(read_only=True) as conn:
        names = sorted(r[0] for r in conn.execute("SELECT conversation_name FROM conversations").fetchall())
        assert names == sorted(conversation_name(x) for x in ["a", "c", "n"])
        turns = conn.execute("SELECT conversation_name, count(*) FROM turns GROUP BY 1 ORDER BY 1").fetchall()
        assert turns == [
            (conversation_name("a"), 1),
            (conversation_name("c"), 2),
            (conversation_name("n"), 2),
        ]
        orphans = conn.execute(
            "SELECT count(*) FROM spans WHERE conversation_name NOT IN "
            "(SELECT conversation_name FROM conversations)"
        ).fetchone()
        assert orphans == (0,)
    after = {
        k: [r for r in rows if conversation_name("n") in repr(r)] for k, rows in snapshot(warehouse).items()
    }
    assert after == other_partitions


def partition_days(warehouse: Warehouse) -> dict[str, set[tuple[str, date]]]:
    """Per conversation table, the (conversation, partition_date) pairs its rows hold."""
    with warehouse.connect(read_only=True) as conn:
        return {
            spec.name: set(
                conn.execute(f"SELECT DISTINCT conversation_name, partition_date FROM {spec.name}").fetchall()
            )
            for spec in CONVERSATION_TABLES
        }


def test_rows_record_their_partition_day_and_a_conversation_moved_to_another_day_leaves_the_first(
    lake: Lake, warehouse: Warehouse
) -> None:
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b")])
    write_partition(lake, APP, NEXT_DAY, [full_conversation("n", start="2026-11-02T08:00:00Z")])
    for day in (DAY, NEXT_DAY):
        load_conversation_partitions(lake, warehouse, [(APP, day)])
    loaded = {
        (conversation_name("a"), DAY),
        (conversation_name("b"), DAY),
        (conversation_name("n"), NEXT_DAY),
    }
    assert partition_days(warehouse)["conversations"] == loaded
    assert partition_days(warehouse)["spans"] == loaded
    assert partition_days(warehouse)["tool_calls"] == loaded
    before = warehouse.row_counts()

    # The server now says "a" started the next day: loading that day replaces a's rows of DAY.
    moved = full_conversation("a", start="2026-11-02T09:00:00Z")
    write_partition(lake, APP, NEXT_DAY, [full_conversation("n", start="2026-11-02T08:00:00Z"), moved])
    load_conversation_partitions(lake, warehouse, [(APP, NEXT_DAY)])

    now = {
        (conversation_name("a"), NEXT_DAY),
        (conversation_name("b"), DAY),
        (conversation_name("n"), NEXT_DAY),
    }
    assert all(pairs == now for pairs in partition_days(warehouse).values())
    assert warehouse.row_counts() == before  # no row of "a" twice


def test_views_answer_the_trend_questions(lake: Lake, warehouse: Warehouse) -> None:
    write_partition(lake, APP, DAY, [full_conversation("a"), dict(full_conversation("b"), source="EVAL")])
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    with warehouse.connect(read_only=True) as conn:
        volume = conn.execute(
            "SELECT day, source, conversations, turns FROM daily_conversations_by_source ORDER BY source"
        ).fetchall()
        assert volume == [(DAY, "EVAL", 1, 2), (DAY, "LIVE", 1, 2)]
        errors = conn.execute(
            "SELECT tool, responses, errors, error_rate FROM daily_tool_error_rate ORDER BY tool"
        ).fetchall()
        assert errors == [
            (f"{APP}/tools/lookup_order", 2, 0, 0.0),
            (f"{APP}/toolsets/crm/get_customer", 2, 2, 1.0),
        ]
        latency = conn.execute(
            "SELECT span_name, spans, p50_seconds, p99_seconds FROM daily_span_latency ORDER BY span_name"
        ).fetchall()
        # a span without a start time (the TTS span) counts on its conversation's day
        assert latency == [
            ("LLM", 2, 0.9, 0.9),
            ("TTS", 2, 0.25, 0.25),
            ("Tool", 2, 1e-9, 1e-9),
            ("Turn", 2, 2.999, 2.999),
        ]


def test_loading_an_unflattened_partition_says_so(lake: Lake, warehouse: Warehouse) -> None:
    with pytest.raises(FileNotFoundError, match="has not been flattened"):
        load_conversation_partitions(lake, warehouse, [(APP, DAY)])


def test_partitions_loaded_together_equal_partitions_loaded_one_by_one(tmp_path: Path, lake: Lake) -> None:
    loaded_together_and_one_by_one(
        lake, Warehouse(str(tmp_path / "one.duckdb")), Warehouse(str(tmp_path / "all.duckdb"))
    )


def loaded_together_and_one_by_one(lake: Lake, one_by_one: Warehouse, together: Warehouse) -> None:
    """Three partitions of two apps loaded one at a time, and at once, hold the same rows; loaded
    again once a reject is mended, each partition's rows and rejects are replaced, never added."""
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b"), {"name": "broken"}])
    write_partition(lake, APP, NEXT_DAY, [full_conversation("n", start="2026-11-02T08:00:00Z")])
    write_partition(lake, OTHER_APP, DAY, [])
    partitions = [(APP, DAY), (APP, NEXT_DAY), (OTHER_APP, DAY)]
    for app, day in partitions:
        load_conversation_partitions(lake, one_by_one, [(app, day)])

    inserted = load_conversation_partitions(lake, together, partitions)

    conversations_and_rejects = {
        partition: (rows["conversations"], rows["rejects"]) for partition, rows in inserted.items()
    }
    assert conversations_and_rejects == {
        (APP, DAY): (2, 1),
        (APP, NEXT_DAY): (1, 0),
        (OTHER_APP, DAY): (0, 0),
    }
    assert snapshot(together) == snapshot(one_by_one)
    changed = full_conversation("a")
    changed["turns"] = changed["turns"][:1]
    write_partition(lake, APP, DAY, [changed])
    again = load_conversation_partitions(lake, together, partitions)  # replaces, never duplicates
    assert {partition: rows["conversations"] for partition, rows in again.items()} == {
        (APP, DAY): 1,
        (APP, NEXT_DAY): 1,
        (OTHER_APP, DAY): 0,
    }
    assert sum(rows["rejects"] for rows in again.values()) == 0
    counts = together.row_counts()
    assert counts["conversations"] == 2 and counts["rejects"] == 0
    assert counts["turns"] == 1 + len(full_conversation("n")["turns"])


def test_a_load_of_several_partitions_is_one_transaction(lake: Lake, warehouse: Warehouse) -> None:
    """A run's partitions are replaced together: all kept or none, each row dated by its file."""
    write_partition(lake, APP, DAY, [full_conversation("a")])
    write_partition(lake, APP, NEXT_DAY, [full_conversation("b", start="2026-11-02T10:00:00Z")])
    broken = lake.table_path("spans", APP, NEXT_DAY)
    good = Path(broken).read_bytes()
    Path(broken).write_bytes(b"not parquet")
    with pytest.raises(duckdb.Error):
        load_conversation_partitions(lake, warehouse, [(APP, DAY), (APP, NEXT_DAY)])
    assert warehouse.row_counts()["conversations"] == 0
    Path(broken).write_bytes(good)
    loaded = load_conversation_partitions(lake, warehouse, [(APP, DAY), (APP, NEXT_DAY)])
    assert {partition: rows["conversations"] for partition, rows in loaded.items()} == {
        (APP, DAY): 1,
        (APP, NEXT_DAY): 1,
    }
    assert warehouse.row_counts()["spans"] == 8
    with warehouse.connect(read_only=True) as conn:
        dated = conn.execute(
            "SELECT conversation_id, partition_date FROM conversations ORDER BY 1"
        ).fetchall()
    assert dated == [("a", DAY), ("b", NEXT_DAY)]


def write_and_read_setting(path: Path, setting: str, **settings: Any) -> list[Any]:
    """DuckDB's `setting` on a write and on a read-only connection."""
    limits = []
    warehouse = Warehouse.from_settings(StorageSettings(warehouse=str(path), **settings))
    for read_only in (False, True):
        with warehouse.connect(read_only=read_only) as conn:
            limits.append(conn.execute(f"SELECT current_setting('{setting}')").fetchone()[0])
    return limits


def test_loads_get_a_bounded_buffer_pool_and_reads_duckdbs_default(tmp_path: Path) -> None:
    """A load's buffer pool comes from the machine (a 32nd of its RAM, 128 MB to 1 GB), not
    DuckDB's 80%: its cache must not grow with what loads read; queries keep DuckDB's own limit,
    which quantiles need."""
    with duckdb.connect() as conn:
        duckdb_default = conn.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    path = tmp_path / "w.duckdb"
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    derived = min(1024, max(128, ram // 32 // 2**20)) * 10**6  # DuckDB's MB are 10^6 bytes
    with duckdb.connect(config={"memory_limit": f"{derived}B"}) as conn:
        expected = conn.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert write_and_read_setting(path, "memory_limit") == [expected, duckdb_default]
    assert [default_write_memory_limit(gb * 2**30) for gb in (2, 24, 64)] == ["128MB", "768MB", "1024MB"]
    from_env = Settings.from_env({"CES_WAREHOUSE_MEMORY_LIMIT": "1GB"}).storage.write_memory_limit
    assert write_and_read_setting(path, "memory_limit", write_memory_limit=from_env) == [
        "953.6 MiB",
        duckdb_default,
    ]
    for bad in ("lots", "25%"):  # DuckDB 1.5 reads no share of RAM
        with pytest.raises(ConfigError, match="CES_WAREHOUSE_MEMORY_LIMIT must be a size"):
            Settings.from_env({"CES_WAREHOUSE_MEMORY_LIMIT": bad})


def test_loads_keep_no_cache_of_the_files_they_read_and_reads_keep_it(tmp_path: Path) -> None:
    """A load reads each part once: DuckDB's cache of read files would only fill its buffer pool
    (a rollup recomputed over 2M conversations: 1,071 MB with it, 538 MB without); a reader, such
    as the MCP server, asks again and keeps it."""
    setting = "enable_external_file_cache"
    assert write_and_read_setting(tmp_path / "w.duckdb", setting) == [False, True]


def test_loads_run_on_one_duckdb_thread_unless_told_and_reads_on_duckdbs_default(tmp_path: Path) -> None:
    with duckdb.connect() as conn:
        duckdb_default = conn.execute("SELECT current_setting('threads')").fetchone()[0]
    path = tmp_path / "w.duckdb"
    assert write_and_read_setting(path, "threads") == [1, duckdb_default]
    from_env = Settings.from_env({"CES_WAREHOUSE_THREADS": "3"}).storage.write_threads
    assert write_and_read_setting(path, "threads", write_threads=from_env) == [3, duckdb_default]
    with pytest.raises(ConfigError, match="CES_WAREHOUSE_THREADS must be at least 1, got 0"):
        Settings.from_env({"CES_WAREHOUSE_THREADS": "0"})


def test_a_load_short_of_memory_names_the_setting_to_raise(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"), write_memory_limit="2MB")
    with (
        pytest.raises(WarehouseMemoryError, match=r"CES_WAREHOUSE_MEMORY_LIMIT \(2MB\)"),
        warehouse.connect() as conn,
    ):
        conn.execute("SET temp_directory = ''")  # nowhere to spill: what a full disk does
        conn.execute("CREATE TABLE t AS SELECT repeat('x', 1000) || i AS s FROM range(100000) r(i)")
        conn.execute("SELECT s, count(*) FROM t GROUP BY s ORDER BY s").fetchall()
