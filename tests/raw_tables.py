"""Conversation tables and rollups a test can edit with SQL, to make the bad rows a check must
catch, or to compute rollups as a load does."""

from __future__ import annotations

import duckdb

from pipelines.transform.schemas import CONVERSATION_TABLES
from pipelines.warehouse.rollups import rollup_names


def editable_tables(conn: duckdb.DuckDBPyConnection) -> None:
    """In a DuckDB file being written, the conversation tables and the rollups are views of Parquet
    parts that no SQL edits: make each a table of its rows, in this working copy only (never
    published by a load: the parts are what a load writes)."""
    for name in (*(spec.name for spec in CONVERSATION_TABLES), *rollup_names()):
        conn.execute(f"CREATE TABLE {name}_rows AS SELECT * FROM {name}")
        conn.execute(f"DROP VIEW {name}")
        conn.execute(f"ALTER TABLE {name}_rows RENAME TO {name}")
