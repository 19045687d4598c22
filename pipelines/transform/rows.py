"""The flatteners' row buffers: tuples per table, Arrow on demand, an object's rows undone when rejected."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa

from pipelines.transform import values as v
from pipelines.transform.rejects import Reject
from pipelines.transform.schemas import TableSpec


class RowBuffer:
    """Row tuples of one table; `to_batch()` transposes them into Arrow columns in C."""

    __slots__ = ("rows", "spec")

    def __init__(self, spec: TableSpec):
        self.spec = spec
        self.rows: list[tuple[Any, ...]] = []

    def to_batch(self) -> pa.RecordBatch:
        schema = self.spec.schema
        columns = list(zip(*self.rows, strict=True)) if self.rows else [() for _ in schema]
        arrays = [pa.array(column, type=field.type) for column, field in zip(columns, schema, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, schema=schema)


class TableBuffers:
    """A `RowBuffer` per table; when `flatten(obj, fill)` fails (schema, depth) obj's rows go: a `Reject`."""

    def __init__(self, specs: Iterable[TableSpec], reject_source: str):
        self.tables = {spec.name: RowBuffer(spec) for spec in specs}
        self.reject_source = reject_source
        self.rejects: list[Reject] = []

    def rows(self, spec: TableSpec) -> list[tuple[Any, ...]]:
        return self.tables[spec.name].rows

    def flatten(self, obj: Any, fill: Callable[[Any], None]) -> bool:
        marks = [len(table.rows) for table in self.tables.values()]
        try:
            fill(obj)
        except (v.SchemaViolation, RecursionError) as exc:
            for table, mark in zip(self.tables.values(), marks, strict=True):
                del table.rows[mark:]
            reason = str(exc) if isinstance(exc, v.SchemaViolation) else "object nested too deeply"
            self.rejects.append(Reject.of(self.reject_source, obj, reason))
            return False
        return True

    def take_batches(self) -> dict[str, pa.RecordBatch]:
        batches = {name: table.to_batch() for name, table in self.tables.items()}
        for table in self.tables.values():
            table.rows.clear()
        return batches

    def take_rejects(self) -> list[Reject]:
        rejects, self.rejects = self.rejects, []
        return rejects
