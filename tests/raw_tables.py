"""Conversation tables a test can edit with SQL, to make the bad rows a check must catch."""

from __future__ import annotations

import duckdb

from pipelines.transform.schemas import CONVERSATION_TABLES


def editable_conversation_tables(conn: duckdb.DuckDBPyConnection) -> None:
    """In a DuckDB file being written, the conversation tables are views of Parquet parts that no
    SQL edits: make each a table of its rows, in this working copy only (never published by a
    load: the parts are what a load writes)."""
    for spec in CONVERSATION_TABLES:
        conn.execute(f"CREATE TABLE {spec.name}_rows AS SELECT * FROM {spec.name}")
        conn.execute(f"DROP VIEW {spec.name}")
        conn.execute(f"ALTER TABLE {spec.name}_rows RENAME TO {spec.name}")
