"""The warehouse as a DuckLake (`CES_WAREHOUSE=ducklake:<catalog>`): the same schema, tables,
columns, views, descriptions and named queries as the DuckDB file, on a DuckDB-file, SQLite or
PostgreSQL catalog; loads of different partitions commit side by side; a reader sees committed
snapshots only."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
import trend_samples as samples
from test_cli import base_env, cli
from test_crash import SCALE as CRASH_SCALE
from test_crash import Versions, intervals, start_child
from test_serve_mcp import call
from test_warehouse import (
    APP,
    DAY,
    NEXT_DAY,
    full_conversation,
    loaded_together_and_one_by_one,
    write_partition,
)

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.config import ServeSettings, StorageSettings
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.orchestration.resources import WarehouseResource
from pipelines.serve.reader import WarehouseReader
from pipelines.serve.server import build_server
from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import ALL_TABLES, CONVERSATION_TABLES
from pipelines.warehouse import ducklake, parts
from pipelines.warehouse.catalog import descriptions, view_names
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.ducklake import DuckLakeMissingError, DuckLakeSetupError
from pipelines.warehouse.parts import BOOKKEEPING
from pipelines.warehouse.queries import named_queries, run_query
from pipelines.warehouse.rollups import rollup_names
from scale.servers import create_database, object_store


def catalog_target(kind: str, folder: Path, postgres: str) -> str:
    if kind == "postgres":  # a database of its own: a catalog's tables are one warehouse's
        name = f"lake_{folder.name.lower().replace('-', '_')[-40:]}"
        return f"ducklake:postgres:{create_database(postgres, name)}"
    return {
        "duckdb": f"ducklake:{folder}/catalog.ducklake",
        "sqlite": f"ducklake:sqlite:{folder}/catalog.sqlite",
    }[kind]


def contents(warehouse: Warehouse) -> dict[str, list[tuple]]:
    with warehouse.connect(read_only=True) as conn:
        return {
            spec.name: sorted(conn.execute(f"SELECT * FROM {spec.name}").fetchall(), key=repr)
            for spec in ALL_TABLES
        }


def catalog(warehouse: Warehouse) -> dict[str, object]:
    """Tables with their columns and types, views, and every description, as SQL clients see them
    (but how each stores its rows: a DuckDB file's conversation tables and rollups are views of
    Parquet parts, listed in bookkeeping tables of its own)."""
    kept_as_parts = {spec.name for spec in CONVERSATION_TABLES} | set(rollup_names())
    with warehouse.connect(read_only=True) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = current_database() AND table_schema = 'main' "
            "ORDER BY table_name, ordinal_position"
        ).fetchall()
        kinds = conn.execute(
            "SELECT table_name, table_type FROM information_schema.tables "
            "WHERE table_catalog = current_database() AND table_schema = 'main' ORDER BY 1"
        ).fetchall()
        comments = conn.execute(sql_text("warehouse/current_comments.sql")).fetchall()
    columns = [column for column in columns if column[0] not in BOOKKEEPING]
    kinds = [
        (name, "BASE TABLE" if name in kept_as_parts else kind)
        for name, kind in kinds
        if name not in BOOKKEEPING
    ]
    comments = [comment for comment in comments if comment[0] not in BOOKKEEPING]
    return {"columns": columns, "kinds": kinds, "comments": sorted(comments, key=repr)}


@pytest.fixture(scope="module")
def file_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return samples.build_warehouse(tmp_path_factory.mktemp("file"))[1]


@pytest.mark.parametrize("kind", ["duckdb", "sqlite", "postgres"])
def test_every_catalog_gets_the_files_tables_views_and_descriptions(
    kind: str, tmp_path: Path, postgres: str, file_warehouse: Warehouse
) -> None:
    lake = Warehouse(catalog_target(kind, tmp_path, postgres), data_path=str(tmp_path / "data"))
    with lake.connect() as conn:
        lake.ensure_schema(conn)
    expected, got = catalog(file_warehouse), catalog(lake)
    assert got["columns"] == expected["columns"] and got["kinds"] == expected["kinds"]
    views = set(view_names())
    # DuckLake describes tables, their columns and views; a view's columns take no comment there.
    described = [c for c in got["comments"] if not (c[0] in views and c[1])]
    assert described == [c for c in expected["comments"] if not (c[0] in views and c[1])]
    wanted = {
        (d.relation, d.column, d.text) for d in descriptions() if not (d.relation in views and d.column)
    }
    assert wanted <= set(described)


def test_a_ducklake_holds_the_files_rows_and_answers_its_queries(
    tmp_path: Path, file_warehouse: Warehouse
) -> None:
    """On a DuckDB-file catalog, the quickest to attach: every catalog holds the same tables
    (above), and `ces-pipeline` loads one on PostgreSQL (below)."""
    lake = Warehouse(catalog_target("duckdb", tmp_path, ""), data_path=str(tmp_path / "data"))
    files, _ = samples.build_warehouse(tmp_path / "lake", lake)
    assert contents(lake) == contents(file_warehouse)
    # a load again changes nothing, and counts each partition's rows as a DuckDB file's load does
    partitions = list(samples.conversations())
    loaded = load_conversation_partitions(files, lake, partitions)
    assert loaded == load_conversation_partitions(files, file_warehouse, partitions)
    assert contents(lake) == contents(file_warehouse)
    with lake.connect(read_only=True) as conn:
        held = conn.execute("SELECT app, partition_date, count(*) FROM conversations GROUP BY ALL").fetchall()
    assert {
        partition: rows["conversations"] for partition, rows in loaded.items() if rows["conversations"]
    } == {(app, day): count for app, day, count in held}
    assert sum(len(rows) for rows in contents(lake).values()) > 500
    for query in named_queries():  # the same rows (ties of an ORDER BY in any order)
        (columns, rows), (file_columns, file_rows) = (
            run_query(lake, query.name),
            run_query(file_warehouse, query.name),
        )
        assert columns == file_columns and sorted(rows, key=repr) == sorted(file_rows, key=repr), query.name
    # `ces-pipeline mcp` reads it as it reads the file
    conversation = samples.all_conversations()[0][1]["name"]
    asks = (("describe_warehouse", {}), ("get_conversation_trace", {"name": conversation}))
    (described, trace), (file_described, file_trace) = (
        call(build_server(WarehouseReader(warehouse, ServeSettings())), *asks)[1]
        for warehouse in (lake, file_warehouse)
    )
    assert not described.is_error and trace.structured_content == file_trace.structured_content
    assert [(r["name"], r["kind"], r["row_count"]) for r in described.structured_content["relations"]] == [
        (r["name"], r["kind"], r["row_count"]) for r in file_described.structured_content["relations"]
    ]
    # a block about one partition (a load's rollups, a lookup) reads its rows alone, as the file's
    # views of its parts do: its conversations, the rows of its conversations in the tables
    # without an app, and the views that join them
    app, day = partitions[-1]
    counted = {}
    for warehouse, root in ((lake, None), (file_warehouse, file_warehouse.parts_root)):
        with warehouse.connect(read_only=True) as conn, parts.reading_only(conn, root, [(app, day)]):
            counted[root] = {
                spec.name: conn.execute(f"SELECT count(*) FROM {spec.name}").fetchone()[0]
                for spec in CONVERSATION_TABLES
            } | {"component_spans": conn.execute("SELECT DISTINCT app, day FROM component_spans").fetchall()}
    assert counted[None] == counted[file_warehouse.parts_root]
    assert counted[None]["component_spans"] == [(app, day)]
    assert 0 < counted[None]["spans"] < len(contents(lake)["spans"])


def test_a_conversation_in_two_partitions_of_one_load_is_kept_once_under_the_later(tmp_path: Path) -> None:
    """Its start moved between the fetches of two raw days that one load (a rebuild) replaces."""
    lake = Lake(str(tmp_path / "lake"))
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b")])
    moved = full_conversation("a", start="2026-11-02T09:00:00Z")
    write_partition(lake, APP, NEXT_DAY, [full_conversation("n", start="2026-11-02T08:00:00Z"), moved])
    file = Warehouse(str(tmp_path / "w.duckdb"))
    catalog = Warehouse(catalog_target("duckdb", tmp_path, ""), data_path=str(tmp_path / "data"))
    loaded = [
        load_conversation_partitions(lake, target, [(APP, DAY), (APP, NEXT_DAY)])
        for target in (file, catalog)
    ]

    assert loaded[0] == loaded[1]
    assert {day: rows["conversations"] for (_, day), rows in loaded[1].items()} == {DAY: 1, NEXT_DAY: 2}
    assert contents(catalog) == contents(file)
    with catalog.connect(read_only=True) as conn:
        held = conn.execute("SELECT conversation_id, partition_date FROM conversations ORDER BY 1").fetchall()
        spans = conn.execute(
            "SELECT DISTINCT partition_date FROM spans WHERE conversation_name LIKE '%/a'"
        ).fetchall()
    assert held == [("a", NEXT_DAY), ("b", DAY), ("n", NEXT_DAY)] and spans == [(NEXT_DAY,)]
    # its data files compressed as the lake's files and a DuckDB file's parts are
    written = list((tmp_path / "data").rglob("*.parquet"))
    assert written and {
        pq.ParquetFile(path).metadata.row_group(0).column(0).compression for path in written
    } == {"ZSTD"}


def test_a_ducklakes_partitions_loaded_together_equal_those_loaded_one_by_one(tmp_path: Path) -> None:
    """A load stages its partitions' conversations and replaces their rejects once for them all."""
    one_by_one, together = (
        Warehouse(catalog_target("duckdb", tmp_path / name, ""), data_path=str(tmp_path / name / "data"))
        for name in ("one", "all")
    )
    loaded_together_and_one_by_one(Lake(str(tmp_path / "lake")), one_by_one, together)


def test_every_writer_writes_zstd_even_one_attached_before_another_set_it(tmp_path: Path) -> None:
    """An attached lake keeps the options it found when attached: each writer sets them itself."""
    target, data = f"ducklake:sqlite:{tmp_path}/catalog.sqlite", str(tmp_path / "data")
    with ducklake.attach(target, data, read_only=False) as first:
        with ducklake.attach(target, data, read_only=False) as second:
            second.execute("CREATE TABLE later AS SELECT range AS i FROM range(1000)")
        first.execute("CREATE TABLE earlier AS SELECT range AS i FROM range(1000)")
    written = {
        path.parent.name: pq.ParquetFile(path).metadata.row_group(0).column(0).compression
        for path in (tmp_path / "data").rglob("*.parquet")
    }
    assert written == {"earlier": "ZSTD", "later": "ZSTD"}


@pytest.mark.parametrize("read_only", [False, True], ids=["writer", "reader"])
def test_a_connection_loads_the_packaged_extensions_then_checks_every_other_load(
    tmp_path: Path, read_only: bool
) -> None:
    """The packaged extensions load without the signature check that hashes each whole file; once
    the lake is attached, the check is on for good: a file with a bad signature is refused, and
    the setting cannot be turned off again."""
    target, data = f"ducklake:sqlite:{tmp_path}/catalog.sqlite", str(tmp_path / "data")
    with ducklake.attach(target, data, read_only=False) as conn:
        conn.execute("CREATE TABLE t AS SELECT 1 AS i")
    tampered = tmp_path / "tampered.duckdb_extension"
    httpfs = ducklake._packaged("httpfs")
    assert httpfs is not None  # the scale extra is part of the test install
    tampered.write_bytes(b"\0" + httpfs.read_bytes()[1:])
    with ducklake.attach(target, data, read_only=read_only) as conn:
        loaded = {
            name
            for (name,) in conn.execute(
                "SELECT extension_name FROM duckdb_extensions() WHERE loaded"
            ).fetchall()
        }
        assert {"ducklake", "sqlite_scanner"} <= loaded
        assert conn.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone() == (False,)
        # as any DuckDB connection: an extension the packages lack is installed when first used
        assert conn.execute("SELECT current_setting('autoinstall_known_extensions')").fetchone() == (True,)
        with pytest.raises(duckdb.IOException, match="signature is either missing or invalid"):
            conn.execute(f"LOAD '{tampered}'")
        with pytest.raises(duckdb.InvalidInputException, match="Cannot change allow_unsigned_extensions"):
            conn.execute("SET allow_unsigned_extensions = true")
        assert conn.execute("SELECT i FROM t").fetchall() == [(1,)]


def test_an_extension_neither_packaged_nor_installed_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without its package, an extension is DuckDB's own: installed from DuckDB's repository on
    first use (here one that refuses the connection), else a clear error naming it."""
    packaged = ducklake._packaged
    monkeypatch.setattr(
        ducklake, "_packaged", lambda name: None if name == "sqlite_scanner" else packaged(name)
    )
    nowhere = {
        "extension_directory": str(tmp_path / "none"),
        "custom_extension_repository": "http://127.0.0.1:9",
    }
    target, data = f"ducklake:sqlite:{tmp_path}/catalog.sqlite", str(tmp_path / "data")
    expected = r"the DuckDB extension sqlite_scanner is not installed: pip install -e '\.\[scale\]' "
    expected += r"\(.*127\.0\.0\.1:9"  # DuckDB's own reason: it tried the repository
    with (
        pytest.raises(DuckLakeSetupError, match=expected),
        ducklake.attach(target, data, read_only=False, config=nowhere),
    ):
        pass


def test_the_cli_ingests_into_a_ducklake_on_postgres(workdir: Path, postgres: str) -> None:
    scale = SimulatorScale(
        seed=3, apps=1, days=2, conversations_per_day=6, max_turns=3, evaluation_runs_per_app=2
    )
    target = catalog_target("postgres", workdir, postgres)
    with running_simulator(SimulatorConfig(scale=scale)) as sim:
        env = base_env(workdir) | {"CES_MCP_URL": sim.url, "CES_APPS": sim.apps[0], "CES_WAREHOUSE": target}
        ingested = cli("ingest", "--since", "2026-11-01", "--until", "2026-11-03", env=env, cwd=workdir)
        assert ingested.returncode == 0, ingested.stderr
        assert "ingested 2 partitions in 1 run: 12 conversations loaded" in ingested.stderr
        assert "password" not in ingested.stderr
        queried = cli("query", "daily_volume", "--format", "json", env=env, cwd=workdir)
        assert queried.returncode == 0, queried.stderr
    maintained = cli("maintain", env=env, cwd=workdir)  # cron's daily upkeep: the lake's too
    found = re.search(
        r"DuckLake warehouse: snapshots (\d+) → (\d+), data files (\d+) → (\d+)", maintained.stderr
    )
    assert maintained.returncode == 0 and found, maintained.stderr
    rows = json.loads(queried.stdout)
    assert [row["conversations"] for row in rows] == [6, 6]
    lake = Warehouse(target, data_path=str(workdir / "lake" / "warehouse"))
    counts = lake.row_counts()
    assert counts["conversations"] == 12
    with lake.connect(read_only=True) as conn:
        (snapshots,) = conn.execute("SELECT count(*) FROM ducklake_snapshots('warehouse')").fetchone()
    assert snapshots == int(found[2]) > 0
    assert counts["evaluation_runs"] == counts["evaluation_run_operations"] == 2
    # The data files lie under the default data path, `warehouse/` under the lake.
    assert list((workdir / "lake" / "warehouse").rglob("*.parquet"))


def test_loads_of_different_partitions_commit_side_by_side_and_readers_see_snapshots(
    tmp_path: Path, postgres: str
) -> None:
    target = catalog_target("postgres", tmp_path, postgres)
    versions = Versions()
    config = SimulatorConfig(scale=CRASH_SCALE, faults=SimulatedFaults(corrupt=versions))
    lake = Warehouse(target, data_path=str(tmp_path / "lake" / "warehouse"))
    with running_simulator(config) as sim:
        logs = [tmp_path / "log-0", tmp_path / "log-1"]
        release = tmp_path / "release"  # both loads hold their transaction open until it exists
        children = [
            start_child(sim.url, tmp_path, f"hold:60:{release}", logs[day], day=day, warehouse=target)
            for day in (0, 1)
        ]
        while not all(log.exists() for log in logs):  # both transactions are open
            ended = [child for child in children if child.poll() is not None]
            assert not ended, ended[0].communicate()[1] if ended else ""
            time.sleep(0.02)
        with lake.connect(read_only=True) as reader:
            during = reader.execute("SELECT count(*) FROM conversations").fetchone()[0]
        release.touch()
        for child in children:
            _, stderr = child.communicate(timeout=120)
            assert child.returncode == 0, stderr
    (_, first_out), (second_in, _) = sorted(intervals(logs[0]) + intervals(logs[1]))
    assert second_in < first_out, "the two loads did not overlap: one waited for the other"
    assert during == 0  # neither load had committed: nothing of either is seen
    per_day = CRASH_SCALE.conversations_per_day
    with lake.connect(read_only=True) as conn:
        assert (
            conn.execute("SELECT count(DISTINCT conversation_name) FROM conversations").fetchone()[0]
            == 2 * per_day
        )
        assert conn.execute("SELECT count(DISTINCT partition_date) FROM spans").fetchone()[0] == 2


def test_a_catalog_that_cannot_be_reached_is_one_clear_error_without_its_password(tmp_path: Path) -> None:
    target = "ducklake:postgres:dbname=ces host=127.0.0.1 port=9 user=ces password=s3cret-value"
    warehouse = Warehouse(target, data_path=str(tmp_path / "data"))
    with pytest.raises(DuckLakeSetupError, match="cannot attach the DuckLake warehouse") as caught:
        warehouse.row_counts()
    assert "s3cret-value" not in str(caught.value) and "password=***" in str(caught.value)
    assert ducklake.quoted("it's") == "'it''s'"
    # In Dagster the target is read from the environment at run time: not in config or the UI.
    resource = WarehouseResource.from_settings(StorageSettings(warehouse=target, lake=str(tmp_path)))
    assert "s3cret-value" not in repr(resource.model_dump()) and "CES_WAREHOUSE" in repr(
        resource.model_dump()
    )


def test_reading_a_catalog_no_load_has_made_yet_says_so(tmp_path: Path, postgres: str) -> None:
    warehouse = Warehouse(catalog_target("postgres", tmp_path, postgres), data_path=str(tmp_path / "data"))
    said = r"no DuckLake warehouse at ducklake:postgres:dbname=\w+ .* yet: the first load creates it"
    with pytest.raises(DuckLakeMissingError, match=said), warehouse.connect(read_only=True):
        pass
    assert set(warehouse.row_counts().values()) == {0}


def test_a_ducklakes_data_files_on_s3(tmp_path: Path, postgres: str, file_warehouse: Warehouse) -> None:
    """Data files on an S3-compatible store (moto), reached through the standard AWS variables."""
    with object_store("s3") as store:
        data_path = f"s3://{store.bucket}/ces/warehouse/"
        lake = Warehouse(catalog_target("postgres", tmp_path, postgres), data_path=data_path)
        samples.build_warehouse(tmp_path / "lake", lake)
        assert contents(lake) == contents(file_warehouse)
        files = [path for path in store.objects(data_path) if path.endswith(".parquet")]
    assert files and all(path.startswith(f"{store.bucket}/ces/warehouse/main/") for path in files)
    with pytest.raises(DuckLakeSetupError, match="local path or s3://, not gs://"):
        Warehouse(lake.path, data_path="gs://bucket/warehouse/").row_counts()


def _files(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*.parquet")}


def _current_files(conn: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """The data files each table of the attached lake reads now."""
    tables = [name for (name,) in conn.execute(sql_text("warehouse/list_tables.sql")).fetchall()]
    return {
        table: {
            path
            for (path,) in conn.execute(
                "SELECT data_file FROM ducklake_list_files('warehouse', $table)", {"table": table}
            ).fetchall()
        }
        for table in tables
    }


def test_maintenance_expires_old_snapshots_and_deletes_the_files_only_they_read(
    tmp_path: Path, file_warehouse: Warehouse
) -> None:
    """DuckLake keeps every snapshot and every replaced file until told: a loaded partition loaded
    again (as each hourly run does) leaves its old files behind, until maintenance drops the
    snapshots older than it keeps and the files only they read; the rows stay as they were."""
    lake = Warehouse(catalog_target("sqlite", tmp_path, ""), data_path=str(tmp_path / "data"))
    samples.build_warehouse(tmp_path / "first", lake)
    samples.build_warehouse(tmp_path / "again", lake)  # the same partitions and runs, replaced
    loaded, on_disk = contents(lake), _files(tmp_path / "data")
    assert loaded == contents(file_warehouse)
    with lake.connect() as conn:
        kept, after_kept = ducklake.maintain(conn)  # by default, an hour's snapshots stay
        assert after_kept.snapshots >= kept.snapshots > 10  # (writing the inlined rows is one more)
        middle = _files(tmp_path / "data")
        assert middle >= on_disk  # the replaced files stay a day
        before, after = ducklake.maintain(conn, snapshots_kept="0 seconds", files_kept="0 seconds")
    assert before.snapshots > 10 and after.snapshots == 1
    assert contents(lake) == loaded
    remaining = _files(tmp_path / "data")
    assert remaining < middle and on_disk - remaining  # the replaced files went
    assert len(remaining) == after.data_files + after.delete_files  # and no other
    assert Warehouse(str(tmp_path / "w.duckdb")).maintain() is None  # a DuckDB file: nothing to do


def test_loads_and_maintenance_merge_small_files_but_the_conversation_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Partitions loaded one at a time (every row in a data file, as a busy lake's loads write
    them): a rollup's files, one a load, are merged by the load that finds more than
    `MERGED_BEYOND`, and all by maintenance; a conversation table's stay as each load wrote them,
    one app's days a file, by which a load or lookup of a few partitions skips the rest."""
    monkeypatch.setattr(ducklake, "MERGED_BEYOND", 2)
    files, _ = samples.build_warehouse(tmp_path / "lake", Warehouse(str(tmp_path / "scratch.duckdb")))
    lake = Warehouse(catalog_target("duckdb", tmp_path, ""), data_path=str(tmp_path / "data"))
    with lake.connect() as conn:
        option = {"name": "data_inlining_row_limit", "value": "0"}
        conn.execute(sql_text("warehouse/ducklake_set_option.sql"), option)
    partitions = list(samples.conversations())
    most = 0
    for partition in partitions:
        load_conversation_partitions(files, lake, [partition])
        with lake.connect(read_only=True) as conn:
            most = max(most, len(_current_files(conn)["daily_conversations"]))
    with lake.connect() as conn:
        loaded = _current_files(conn)
        ducklake.maintain(conn)
        merged = _current_files(conn)
    assert len(partitions) == 4 and most == 2  # merged by the load that made it 3, not 4
    assert len(merged["daily_conversations"]) == 1
    assert all(
        len(loaded[spec.name]) == len(partitions)
        for spec in CONVERSATION_TABLES
        if spec.name != "agent_transfers"
    )
    assert all(merged[spec.name] == loaded[spec.name] for spec in CONVERSATION_TABLES)


def test_a_merge_that_fails_after_the_loads_commit_is_a_warning_not_a_failed_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The merge after a load is housekeeping that maintenance does again: its error (here, a
    table it cannot find) leaves the committed load standing and says why, once."""
    monkeypatch.setattr(ducklake, "MERGED_BEYOND", 0)  # every load merges
    merge = "warehouse/ducklake_merge_files.sql"
    failing = "CALL ducklake_merge_adjacent_files('warehouse', $table || '_gone');"
    monkeypatch.setattr(ducklake, "sql_text", lambda name: failing if name == merge else sql_text(name))
    lake = Lake(str(tmp_path / "lake"))
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b")])
    catalog = Warehouse(catalog_target("duckdb", tmp_path, ""), data_path=str(tmp_path / "data"))
    with catalog.connect() as conn:  # every row in a data file, none inlined in the catalog
        option = {"name": "data_inlining_row_limit", "value": "0"}
        conn.execute(sql_text("warehouse/ducklake_set_option.sql"), option)
    with caplog.at_level("WARNING", logger="pipelines.warehouse.loads"):
        loaded = load_conversation_partitions(lake, catalog, [(APP, DAY)])
    assert loaded[(APP, DAY)]["conversations"] == 2
    with catalog.connect(read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM conversations").fetchone() == (2,)
    (warned,) = [record.getMessage() for record in caplog.records]
    assert warned.startswith("the load committed but merging small files failed: Catalog Error"), warned


def test_the_maintenance_job_reports_the_lakes_state_before_and_after(tmp_path: Path) -> None:
    """The daily schedule's job, run by Dagster on the warehouse resource as configured."""
    import dagster as dg

    from pipelines.orchestration.maintenance import warehouse_maintenance_job

    lake = Warehouse(catalog_target("duckdb", tmp_path, ""), data_path=str(tmp_path / "data"))
    samples.build_warehouse(tmp_path / "first", lake)
    with lake.connect(read_only=True) as conn:
        (snapshots,) = conn.execute("SELECT count(*) FROM ducklake_snapshots('warehouse')").fetchone()
    resource = WarehouseResource.from_settings(
        StorageSettings(warehouse=lake.path, warehouse_data_path=lake.data_path)
    )
    result = warehouse_maintenance_job.execute_in_process(resources={"warehouse": resource})
    assert result.success
    (materialized,) = [
        event for event in result.all_events if event.event_type == dg.DagsterEventType.STEP_OUTPUT
    ]
    metadata = {key: value.value for key, value in materialized.step_output_data.metadata.items()}
    with lake.connect(read_only=True) as conn:
        (data_files,) = conn.execute(
            "SELECT sum(file_count) FROM ducklake_table_info('warehouse')"
        ).fetchone()
        (after,) = conn.execute("SELECT count(*) FROM ducklake_snapshots('warehouse')").fetchone()
    # an hour's snapshots kept; writing the inlined rows and merging files are snapshots of their own
    assert metadata["snapshots before"] == snapshots and metadata["snapshots after"] == after > snapshots
    assert metadata["data_files after"] == data_files > 0


KEEPALIVES = "keepalives_idle=30 keepalives_interval=10 keepalives_count=3 tcp_user_timeout=60000"


@pytest.mark.parametrize(
    ("target", "bounded", "bounded_by_pgconnect_timeout"),
    [
        (
            "ducklake:postgres:dbname=ces host=db",
            f"ducklake:postgres:dbname=ces host=db connect_timeout=10 {KEEPALIVES}",
            f"ducklake:postgres:dbname=ces host=db {KEEPALIVES}",
        ),
        (
            "ducklake:postgres:postgresql://ces@db/ces",
            f"ducklake:postgres:postgresql://ces@db/ces?connect_timeout=10&{KEEPALIVES.replace(' ', '&')}",
            f"ducklake:postgres:postgresql://ces@db/ces?{KEEPALIVES.replace(' ', '&')}",
        ),
        (
            "ducklake:postgres:postgres://ces@db/ces?sslmode=require&keepalives=0",
            "ducklake:postgres:postgres://ces@db/ces?sslmode=require&keepalives=0&connect_timeout=10",
            "ducklake:postgres:postgres://ces@db/ces?sslmode=require&keepalives=0",
        ),
        (
            "ducklake:postgres:dbname=ces connect_timeout=3 tcp_user_timeout=5000",
            "ducklake:postgres:dbname=ces connect_timeout=3 tcp_user_timeout=5000",
            "ducklake:postgres:dbname=ces connect_timeout=3 tcp_user_timeout=5000",
        ),
        ("ducklake:sqlite:catalog.sqlite",) * 3,
    ],
)
def test_a_postgres_catalogs_connection_is_bounded_unless_its_conninfo_bounds_it(
    monkeypatch: pytest.MonkeyPatch, target: str, bounded: str, bounded_by_pgconnect_timeout: str
) -> None:
    """libpq waits forever for a catalog that never answers, or whose host went down, unless told
    otherwise; what the conninfo sets is kept. (The keywords reach a real libpq in the tests
    of a catalog on PostgreSQL.)"""
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    assert ducklake.bounded_connect(target) == bounded
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "3")  # which libpq reads itself
    assert ducklake.bounded_connect(target) == bounded_by_pgconnect_timeout
