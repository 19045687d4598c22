"""An older warehouse file is migrated on open; a newer one is refused."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import pytest

from pipelines.sqlfiles import sql_files, sql_text
from pipelines.transform.schemas import (
    CONVERSATION_TABLES,
    EVALUATION_EXPECTATION_OUTCOMES,
    EVALUATION_RESULTS,
    EVALUATION_TURN_REPLAYS,
)
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.migrations import WarehouseVersionError, latest_version, migrations

RUN = "projects/p/locations/l/apps/a/evaluationRuns/r"


def versions(path: str) -> list[tuple[int, str]]:
    with duckdb.connect(path, read_only=True) as conn:
        return conn.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()


def test_a_new_warehouse_starts_at_the_latest_version(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        warehouse.ensure_schema(conn)
    assert versions(warehouse.path) == [(latest_version(), "created")]
    assert latest_version() == migrations()[-1].version >= 2


def test_a_version_1_warehouse_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "old.duckdb")
    with duckdb.connect(path) as conn:  # what the first release wrote: no observed_at, no version table
        for ddl in sql_files("tables"):
            conn.execute(ddl.read_text())
        conn.execute("ALTER TABLE evaluation_runs DROP COLUMN observed_at")
        conn.execute(
            "INSERT INTO evaluation_runs (evaluation_run_name, state) VALUES (?, ?)", [RUN, "COMPLETED"]
        )
    warehouse = Warehouse(path)
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        rows = conn.execute("SELECT evaluation_run_name, state, observed_at FROM evaluation_runs").fetchall()
    assert rows == [(RUN, "COMPLETED", None)]
    assert [version for version, _ in versions(path)] == [m.version for m in migrations()]


CONVERSATION = "projects/p/locations/l/apps/a/conversations/c"


def test_a_version_2_warehouse_gets_the_partition_day_of_its_conversations(tmp_path: Path) -> None:
    path = str(tmp_path / "v2.duckdb")
    with duckdb.connect(path) as conn:  # what version 2 wrote: no partition_date
        for ddl in sql_files("tables"):
            conn.execute(ddl.read_text())
        conn.execute(sql_text("warehouse/create_schema_version.sql"))
        conn.execute("INSERT INTO schema_version VALUES (2, 'created', now())")
        for spec in CONVERSATION_TABLES:
            conn.execute(f"ALTER TABLE {spec.name} DROP COLUMN partition_date")
        conn.execute(  # 23:30 on the 5th in UTC, though written with an offset
            "INSERT INTO conversations (conversation_name, start_time) VALUES (?, ?)",
            [CONVERSATION, "2026-11-06 01:30:00+02:00"],
        )
        conn.execute(
            "INSERT INTO spans (conversation_name, span_id) VALUES (?, 0), (?, 1)", [CONVERSATION] * 2
        )
        conn.execute("INSERT INTO spans (conversation_name, span_id) VALUES ('orphan', 0)")
    warehouse = Warehouse(path)
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        conversations = conn.execute("SELECT conversation_name, partition_date FROM conversations").fetchall()
        spans = conn.execute(
            "SELECT conversation_name, span_id, partition_date FROM spans ORDER BY ALL"
        ).fetchall()
        stored = dict(conn.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
        parts = conn.execute(
            "SELECT relation, app, partition_date, rows FROM warehouse_parts ORDER BY ALL"
        ).fetchall()
    day = date(2026, 11, 5)
    assert conversations == [(CONVERSATION, day)]
    assert spans == [("orphan", 0, None), (CONVERSATION, 0, day), (CONVERSATION, 1, day)]
    # the conversation tables moved out of the file into parts, every row kept (an orphan's apart)
    assert stored["conversations"] == stored["spans"] == "VIEW"
    assert parts == [  # the conversation was written with no app
        ("conversations", None, day, 1),
        ("spans", None, day, 2),
        ("spans", None, None, 1),
    ]
    assert [version for version, _ in versions(path)] == [
        2,
        *(m.version for m in migrations() if m.version > 2),
    ]


def test_a_warehouse_from_a_newer_release_is_refused(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        conn.execute("INSERT INTO schema_version VALUES (999, 'future', now())")
    with warehouse.connect() as conn, pytest.raises(WarehouseVersionError, match="schema version 999"):
        warehouse.ensure_schema(conn)


def test_a_version_3_warehouse_numbers_its_latency_entries(tmp_path: Path) -> None:
    path = str(tmp_path / "v3.duckdb")
    with duckdb.connect(path) as conn:  # what version 3 wrote: latencies keyed by subject
        for ddl in sql_files("tables"):
            conn.execute(ddl.read_text())
        conn.execute(sql_text("warehouse/create_schema_version.sql"))
        conn.execute("INSERT INTO schema_version VALUES (3, 'created', now())")
        conn.execute("ALTER TABLE evaluation_run_latencies DROP COLUMN entry_index")
        conn.execute(
            "INSERT INTO evaluation_run_latencies (evaluation_run_name, kind, subject) VALUES "
            "(?, 'tool', 'b'), (?, 'tool', 'a'), (?, 'callback', 'beforeModel')",
            [RUN] * 3,
        )
    warehouse = Warehouse(path)
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        rows = conn.execute(
            "SELECT kind, subject, entry_index FROM evaluation_run_latencies ORDER BY ALL"
        ).fetchall()
    assert rows == [("callback", "beforeModel", 0), ("tool", "a", 0), ("tool", "b", 1)]
    assert [version for version, _ in versions(path)][-1] == latest_version() >= 4


def test_a_version_6_warehouse_gets_the_result_columns_of_version_7_in_the_tables_order(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "v6.duckdb")
    added = {
        "evaluation_results": EVALUATION_RESULTS.schema.names[-7:],
        "evaluation_turn_replays": EVALUATION_TURN_REPLAYS.schema.names[-2:],
        "evaluation_expectation_outcomes": EVALUATION_EXPECTATION_OUTCOMES.schema.names[-14:],
    }
    assert added["evaluation_results"][0] == "changelog_create_time"
    assert added["evaluation_expectation_outcomes"][0] == "note"
    with duckdb.connect(path) as conn:  # what version 6 wrote: none of those columns
        for ddl in sql_files("tables"):
            conn.execute(ddl.read_text())
        conn.execute(sql_text("warehouse/create_schema_version.sql"))
        conn.execute("INSERT INTO schema_version VALUES (6, 'created', now())")
        for table, columns in added.items():
            for column in columns:
                conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        conn.execute(
            "INSERT INTO evaluation_results (evaluation_result_name, changelog) VALUES (?, ?)",
            [f"{RUN}/results/x", "v2"],
        )
    warehouse = Warehouse(path)
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        rows = conn.execute(
            "SELECT evaluation_result_name, changelog, changelog_create_time, persona_speech_config "
            "FROM evaluation_results"
        ).fetchall()
        columns = {
            spec.name: [
                name
                for (name,) in conn.execute(f"SELECT name FROM pragma_table_info('{spec.name}')").fetchall()
            ]
            for spec in (EVALUATION_RESULTS, EVALUATION_TURN_REPLAYS, EVALUATION_EXPECTATION_OUTCOMES)
        }
    assert rows == [(f"{RUN}/results/x", "v2", None, None)]
    assert columns == {
        spec.name: spec.schema.names
        for spec in (EVALUATION_RESULTS, EVALUATION_TURN_REPLAYS, EVALUATION_EXPECTATION_OUTCOMES)
    }
    assert [version for version, _ in versions(path)] == [
        6,
        7,
        *(m.version for m in migrations() if m.version > 7),
    ]
