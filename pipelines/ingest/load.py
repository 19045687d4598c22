"""Load step: one partition's Parquet files → the warehouse, replacing what was there."""

from __future__ import annotations

from datetime import date

from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS
from pipelines.warehouse.duck import Warehouse


def load_conversation_partition(lake: Lake, warehouse: Warehouse, app: str, day: date) -> dict[str, int]:
    """Replace the (app, day) partition in every conversation table; returns rows inserted per table."""
    files = {spec.name: lake.url(lake.table_path(spec.name, app, day)) for spec in CONVERSATION_TABLES}
    missing = [path for path in files.values() if not lake.fs.exists(path)]
    if missing:
        raise FileNotFoundError(f"partition {app} {day} has not been flattened: missing {missing[0]}")
    rejects_file = lake.url(lake.table_path(REJECTS.name, app, day))
    filesystem = None if lake.is_local else lake.fs
    return warehouse.replace_conversation_partition(app, day, files, rejects_file, filesystem=filesystem)
