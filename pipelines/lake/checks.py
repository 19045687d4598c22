"""Checks on Parquet partitions, read straight from the files the flatten step wrote."""

from __future__ import annotations

from datetime import date

import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.ces.window import TimeWindow
from pipelines.lake.store import Lake


def rows_outside_partition(lake: Lake, table: str, column: str, app: str, day: date) -> int:
    """Rows of one (app, day) partition file whose `column` is not on `day` (UTC); NULLs count."""
    path = lake.table_path(table, app, day)
    with lake.fs.open(path, "rb") as handle:
        values = pq.read_table(handle, columns=[column]).column(column)
    window = TimeWindow.for_day(day)
    inside = pc.and_(pc.greater_equal(values, window.since), pc.less(values, window.until))
    return len(values) - pc.sum(pc.fill_null(inside, False).cast("int64")).as_py() if len(values) else 0
