"""The dlt baseline: the same conversation tables loaded into DuckDB by a dlt pipeline.

dlt takes Python rows (one dict per row, tagged with its table) and normalises, writes and
loads them itself. The rows come from the project's reference row flattener, so the tables,
columns and row counts are the warehouse's; dlt does the rest with its Parquet loader file
format into DuckDB, with two normalise workers (this machine's cores) and telemetry off.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipelines.ces.tools import resolve_conversations
from pipelines.ces.window import TimeWindow
from pipelines.ingest.flatten import CONVERSATIONS_DATASET
from pipelines.lake.store import Lake
from pipelines.transform.conversations import ConversationFlattener
from pipelines.transform.schemas import CONVERSATION_TABLES, TIMESTAMP

_DLT_TYPES = {"string": "text", "int32": "bigint", "int64": "bigint", "double": "double", "bool": "bool"}


def _column_hints(spec) -> dict[str, dict[str, Any]]:
    hints: dict[str, dict[str, Any]] = {}
    for field in spec.schema:
        if field.type == TIMESTAMP:
            hints[field.name] = {"data_type": "timestamp", "nullable": True}
        elif field.name in spec.json_columns or str(field.type).startswith("list"):
            hints[field.name] = {"data_type": "json", "nullable": True}
        else:
            hints[field.name] = {"data_type": _DLT_TYPES[str(field.type)], "nullable": True}
    return hints


def _rows(lake_root: str, limit: int | None) -> Iterator[Any]:
    """The rows of every table, as dicts dlt normalises and loads, flattened 200 at a time."""
    import dlt

    lake = Lake(lake_root)
    flattener = ConversationFlattener()
    seen = 0

    def rows() -> Iterator[Any]:
        for table, batch in flattener.take_batches().items():
            for row in batch.to_pylist():
                yield dlt.mark.with_table_name(row, table)

    for app, day in lake.raw_partitions(CONVERSATIONS_DATASET):
        records = lake.read_jsonl(lake.raw_path(CONVERSATIONS_DATASET, app, day))
        for conversation in resolve_conversations(
            records, TimeWindow.for_day(day), on_reject=lambda *_: None
        ):
            if limit is not None and seen >= limit:
                yield from rows()
                return
            seen += 1
            flattener.add(conversation)
            if len(flattener) >= 200:
                yield from rows()
    yield from rows()


def run_dlt(lake_root: str, work: Path, *, limit: int | None = None) -> dict[str, Any]:
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    os.environ.setdefault("RUNTIME__LOG_LEVEL", "WARNING")
    os.environ.setdefault("NORMALIZE__WORKERS", "2")
    os.environ.setdefault("DATA_WRITER__BUFFER_MAX_ITEMS", "5000")
    import dlt
    import duckdb

    database = str(work / "dlt.duckdb")

    @dlt.resource(name="conversations_rows", max_table_nesting=0, write_disposition="append")
    def conversation_rows() -> Iterator[Any]:
        yield from _rows(lake_root, limit)

    pipeline = dlt.pipeline(
        pipeline_name="ces_bench",
        pipelines_dir=str(work / "pipelines"),
        destination=dlt.destinations.duckdb(database),
        dataset_name="ces",
    )
    source = dlt.source(lambda: conversation_rows, name="ces", max_table_nesting=0)()
    schema = source.schema
    for spec in CONVERSATION_TABLES:
        schema.update_table(
            {"name": spec.name, "columns": {k: {"name": k, **v} for k, v in _column_hints(spec).items()}}
        )
    started = time.perf_counter()
    pipeline.run(source, loader_file_format="parquet")
    elapsed = time.perf_counter() - started
    with duckdb.connect(database, read_only=True) as conn:
        rows = {
            spec.name: conn.execute(f"SELECT count(*) FROM ces.{spec.name}").fetchone()[0]
            for spec in CONVERSATION_TABLES
        }
    return {"seconds": elapsed, "rows": rows, "limit": limit}
