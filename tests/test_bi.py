"""The warehouse as a BI tool sees it: every view through SQLAlchemy (duckdb-engine) read-only,
a description on every table, view and column, and the Parquet lake read directly."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.dataset as ds
import pytest
import sqlalchemy
import trend_samples as samples

from pipelines.sqlfiles import sql_files
from pipelines.transform.schemas import ALL_TABLES, CONVERSATION_TABLES
from pipelines.warehouse import analysis
from pipelines.warehouse.catalog import descriptions, view_names
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.rollups import rollup_names


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    return samples.build_warehouse(tmp_path_factory.mktemp("bi"))


def test_every_view_reads_through_sqlalchemy_read_only(built) -> None:
    _, warehouse = built
    with duckdb.connect(warehouse.path, read_only=True) as native:
        expected = {
            view: native.execute(f"SELECT count(*) FROM {view}").fetchone()[0] for view in view_names()
        }
        columns = {
            view: [d[0] for d in native.execute(f"DESCRIBE {view}").fetchall()] for view in view_names()
        }
    # The URI the README gives for Superset: duckdb:///<absolute path>?access_mode=read_only
    engine = sqlalchemy.create_engine(f"duckdb:///{Path(warehouse.path).resolve()}?access_mode=read_only")
    try:
        inspector = sqlalchemy.inspect(engine)
        assert set(view_names()) <= set(inspector.get_view_names())
        relations = set(inspector.get_table_names()) | set(inspector.get_view_names())
        assert {spec.name for spec in ALL_TABLES} <= relations
        with engine.connect() as conn:
            for view in view_names():
                result = conn.execute(sqlalchemy.text(f"SELECT * FROM {view}"))
                assert list(result.keys()) == columns[view], view
                assert len(result.fetchall()) == expected[view] > 0, view
            with pytest.raises(sqlalchemy.exc.DBAPIError, match="read-only"):
                conn.execute(sqlalchemy.text("DELETE FROM rejects"))
    finally:
        engine.dispose()


def test_every_table_view_and_column_is_described(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "fresh.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        main = "schema_name = 'main'"
        tables = dict(
            conn.execute(f"SELECT table_name, comment FROM duckdb_tables() WHERE {main}").fetchall()
        )
        views = dict(
            conn.execute(
                f"SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND {main}"
            ).fetchall()
        )
        kept = {spec.name for spec in ALL_TABLES} | set(rollup_names())  # views of parts, or tables
        tables |= {name: views.pop(name) for name in list(views) if name in kept}
        columns = conn.execute(
            f"SELECT table_name, column_name, comment FROM duckdb_columns() WHERE {main}"
        ).fetchall()
        listing = conn.execute("SELECT view_name FROM duckdb_views() WHERE schema_name = 'parts'").fetchall()
    # the views that list the conversation tables' and the rollups' parts, which their own views read
    kept_as_parts = [spec.name for spec in CONVERSATION_TABLES] + rollup_names()
    assert sorted(name for (name,) in listing) == sorted(kept_as_parts)
    contract = {spec.name for spec in ALL_TABLES} | set(view_names()) | set(rollup_names())
    assert all(tables[name] for name in {spec.name for spec in ALL_TABLES} | set(rollup_names())), tables
    assert set(views) == set(view_names()) and all(views.values()), views
    undescribed = [(table, column) for table, column, comment in columns if table in contract and not comment]
    assert undescribed == []


def test_description_files_name_their_relation_and_existing_columns() -> None:
    described = {d.relation for d in descriptions()}
    assert {path.stem for path in sql_files("comments")} == described
    with duckdb.connect() as conn:  # the settings' tables and the metric scores they shape
        analysis.create_tables(conn)
        settings = {name for (name,) in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    tables = {spec.name for spec in ALL_TABLES} | settings
    assert described == tables | set(view_names()) | set(rollup_names())
    for path in sql_files("comments"):
        statements = path.read_text().count("COMMENT ON")
        assert statements == sum(d.relation == path.stem for d in descriptions()), path.name
    for spec in ALL_TABLES:
        assert {d.column for d in descriptions() if d.relation == spec.name and d.column} == set(
            spec.warehouse_schema.names
        )


def test_every_rollup_column_is_described(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        for name in rollup_names():
            found = conn.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [name])
            columns = {column for (column,) in found.fetchall()}
            assert {d.column for d in descriptions() if d.relation == name and d.column} == columns, name


def test_only_changed_descriptions_are_applied_again(tmp_path: Path) -> None:
    from pipelines.warehouse.catalog import apply_comments

    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        assert apply_comments(conn) == 0
        conn.execute("COMMENT ON COLUMN spans.name IS 'edited by hand'")
        assert apply_comments(conn) == 1


def test_the_parquet_lake_reads_directly_with_duckdb_and_pyarrow(built) -> None:
    lake, _ = built
    root = Path(lake.root)
    spans = samples.spans()
    with duckdb.connect() as conn:
        rows = conn.execute(
            "SELECT app, count(*) FROM read_parquet($files, hive_partitioning = true) GROUP BY app",
            {"files": str(root / "tables" / "spans" / "*" / "*" / "*.parquet")},
        ).fetchall()
    segments = {"p1.us.sales": samples.SALES, "p1.us.support": samples.SUPPORT}
    assert {segments[app]: count for app, count in rows} == {
        app: sum(1 for s in spans if s["app"] == app) for app in samples.APPS
    }
    dataset = ds.dataset(root / "tables" / "spans", format="parquet", partitioning="hive")
    table = dataset.to_table(filter=ds.field("date") == "2026-11-02", columns=["name", "duration_seconds"])
    assert table.num_rows == sum(1 for s in spans if s["day"].isoformat() == "2026-11-02")
