"""Load step: partitions' Parquet files → the warehouse, replacing what was there."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.loads import LoadedRows, PartitionFiles


def load_conversation_partitions(
    lake: Lake, warehouse: Warehouse, partitions: Sequence[tuple[str, date]]
) -> LoadedRows:
    """Replace these partitions in every conversation table in one transaction; rows inserted per
    partition and table."""
    files = [partition_files(lake, app, day) for app, day in partitions]

    def load() -> LoadedRows:
        with warehouse.conversation_load(filesystem=None if lake.is_local else lake.fs) as replacing:
            return replacing(files)

    return warehouse.retrying_conflicts(load)


def partition_files(lake: Lake, app: str, day: date) -> PartitionFiles:
    """The flattened files of one partition; FileNotFoundError when it has not been flattened."""
    tables = {spec.name: lake.url(lake.table_path(spec.name, app, day)) for spec in CONVERSATION_TABLES}
    missing = [path for path in tables.values() if not lake.fs.exists(path)]
    if missing:
        raise FileNotFoundError(f"partition {app} {day} has not been flattened: missing {missing[0]}")
    return PartitionFiles(app, day, tables, lake.url(lake.table_path(REJECTS.name, app, day)))
