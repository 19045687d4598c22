"""Load step: partitions' Parquet files → the warehouse, replacing what was there."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import date

from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS
from pipelines.warehouse.duck import ConversationLoad, PartitionFiles, Warehouse


def load_conversation_partition(lake: Lake, warehouse: Warehouse, app: str, day: date) -> dict[str, int]:
    """Replace the (app, day) partition in every conversation table; returns rows inserted per table."""
    return load_conversation_partitions(lake, warehouse, [(app, day)])


def load_conversation_partitions(
    lake: Lake, warehouse: Warehouse, partitions: Sequence[tuple[str, date]]
) -> dict[str, int]:
    """Replace several (app, day) partitions in one transaction; rows inserted per table, summed."""
    with open_conversation_load(lake, warehouse) as load:
        return replace_partitions(load, lake, partitions)


def open_conversation_load(lake: Lake, warehouse: Warehouse) -> AbstractContextManager[ConversationLoad]:
    """A warehouse transaction that loads this lake's partitions (`replace_partitions`),
    committed when the block ends."""
    return warehouse.conversation_load(filesystem=None if lake.is_local else lake.fs)


def replace_partitions(
    load: ConversationLoad, lake: Lake, partitions: Sequence[tuple[str, date]]
) -> dict[str, int]:
    """Replace these partitions within `load`'s transaction; rows inserted per table, summed."""
    return load.replace([partition_files(lake, app, day) for app, day in partitions])


def partition_files(lake: Lake, app: str, day: date) -> PartitionFiles:
    """The flattened files of one partition; FileNotFoundError when it has not been flattened."""
    tables = {spec.name: lake.url(lake.table_path(spec.name, app, day)) for spec in CONVERSATION_TABLES}
    missing = [path for path in tables.values() if not lake.fs.exists(path)]
    if missing:
        raise FileNotFoundError(f"partition {app} {day} has not been flattened: missing {missing[0]}")
    return PartitionFiles(app, day, tables, lake.url(lake.table_path(REJECTS.name, app, day)))
