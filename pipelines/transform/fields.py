"""Field maps: each column of a table as a path into an object's JSON with its checked reader
(`values`, enums), and the one walk that fills the tables' column buffers from them. An object
with a bad value leaves no row in any table: it is a `Reject`, with the bad value's path."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa

from pipelines.protojson.enums import enum_name
from pipelines.transform import values as v
from pipelines.transform.columns import TableColumns
from pipelines.transform.rejects import Reject
from pipelines.transform.schemas import TableSpec

Read = Callable[[Any, str], Any]
"""A value's reader: (the JSON value, its path) → the column's value, or a `SchemaViolation`."""
Column = Callable[[Any, str], Any]
"""A column's reader: (the row's JSON object, its path with a trailing dot, `a.b[2].`, or "")."""


def at(path: str, read: Read) -> Column:
    """`read` of the value at the dotted `path` in the row's object (`""`: the object itself); the
    messages on the way must be objects, an absent one reads as empty."""
    if not path:
        return lambda obj, where: read(obj, where[:-1])
    *parents, leaf = path.split(".")
    steps = [(key, ".".join(parents[: depth + 1])) for depth, key in enumerate(parents)]

    def column(obj: Any, where: str) -> Any:
        if type(obj) is not dict:
            obj = v.message(obj, where[:-1])
        for key, label in steps:
            obj = v.message(obj.get(key), where + label)
        return read(obj.get(leaf), where + path)

    return column


def _at(read: Read) -> Callable[[str], Column]:
    return lambda path: at(path, read)


text, int32, double, boolean, timestamp, duration = map(
    _at, (v.text, v.int32, v.double, v.boolean, v.timestamp, v.duration)
)
score = _at(lambda value, label: float(v.int32(value, label)))
"""An int32 score in a DOUBLE column."""


def enum(path: str, type_name: str) -> Column:
    return at(path, lambda value, label: enum_name(value, type_name, label))


def json(path: str, read: Read = v.message) -> Column:
    """A message (or, read by `v.array`, a list) as JSON text; NULL when absent or empty."""
    return at(path, lambda value, label: v.json_text(sent, label) if (sent := read(value, label)) else None)


def const(value: Any) -> Column:
    return lambda obj, where: value


def given(path: str, test: Callable[[Any], bool], column: Column, read: Read | None = None) -> Column:
    """`column` where the value at `path` (as sent, or read by `read`) passes `test`; else NULL."""
    found = at(path, read or (lambda value, label: value))
    return lambda obj, where: column(obj, where) if test(found(obj, where)) else None


def _missing(obj: Any, where: str) -> Any:
    raise KeyError(f"{where}: a column neither read by the field map nor given by the context")


def _message_or_none(value: Any, label: str) -> dict[str, Any] | None:
    return None if value is None else v.message(value, label)


NUMBER: Column = const(None)
"""The row's number among its table's rows of the object added (lists numbered across the object)."""


@dataclass(frozen=True)
class Rows:
    """The rows of `table` (none: a mere group) read by `fields` from the objects at `path` in the
    parent (`""`: the parent itself), and in each the rows of `children`. `each`: "one" message
    (none when null or when `when` fails), every item of a "list", every value of a "map" (keyed
    by name). Context, which the object's rows and all below read: the columns given to `add`, the
    `index` column (a list item's position, a map value's key), the columns `derive` computes."""

    table: TableSpec | None
    fields: Mapping[str, Column] = field(default_factory=dict)
    path: str = ""
    each: str = "one"
    index: str | None = None
    when: Callable[[dict[str, Any]], bool] | None = None
    derive: Callable[[Any, str], dict[str, Any]] | None = None
    children: tuple[Rows, ...] = ()

    @cached_property
    def find(self) -> Column:
        """The objects in a parent: the message (None when null), the list, or the map."""
        return at(self.path, {"one": _message_or_none, "list": v.array, "map": v.message}[self.each])

    @cached_property
    def columns(self) -> list[tuple[str, Column]]:
        """The table's columns in order, each with its reader (none: a context column)."""
        assert self.table is not None
        return [(column, self.fields.get(column, _missing)) for column in self.table.schema.names]

    @cached_property
    def numbered(self) -> str | None:
        """The column that numbers the table's rows of the object added, if any."""
        return next((column for column, read in self.fields.items() if read is NUMBER), None)

    def specs(self) -> Iterator[TableSpec]:
        yield from [self.table] if self.table else []
        for child in self.children:
            yield from child.specs()


class FieldFlattener:
    """The tables of `rows` filled from each object added (a `label` message, then the values of the
    `given` columns); a batch per table each `take_batches()`, the rejects each `take_rejects()`."""

    def __init__(self, rows: Rows, source: str, label: str, given: tuple[str, ...] = ()):
        self.tables = {spec.name: TableColumns(spec) for spec in rows.specs()}
        self.rows, self.source, self.label, self.given = rows, source, label, given
        self.rejects: list[Reject] = []
        self._marks: dict[str, int] = {}

    def add(self, obj: Any, *given: Any) -> bool:
        """Flatten one object; False when it is rejected (no row of it kept)."""
        self._marks = {name: table.rows for name, table in self.tables.items()}
        try:
            context = dict(zip(self.given, given, strict=True))
            self._row(self.rows, v.message(obj, self.label), "", context)
        except (v.SchemaViolation, RecursionError) as exc:
            for name, table in self.tables.items():
                table.truncate(self._marks[name])
            reason = str(exc) if isinstance(exc, v.SchemaViolation) else "object nested too deeply"
            self.rejects.append(Reject.of(self.source, obj, reason))
            return False
        return True

    def take_batches(self) -> dict[str, pa.RecordBatch]:
        batches = {name: table.to_batch() for name, table in self.tables.items()}
        for table in self.tables.values():
            table.clear()
        return batches

    def take_rejects(self) -> list[Reject]:
        rejects, self.rejects = self.rejects, []
        return rejects

    def _walk(self, rows: Rows, parent: dict[str, Any], where: str, context: dict[str, Any]) -> None:
        found = rows.find(parent, where)
        if rows.each == "one":
            if found is not None and (rows.when is None or rows.when(found)):
                self._row(rows, found, f"{where}{rows.path}." if rows.path else where, context)
            return
        for key, item in enumerate(found) if rows.each == "list" else found.items():
            inherited = context if rows.index is None else {**context, rows.index: key}
            self._row(rows, item, f"{where}{rows.path}[{key}].", inherited)

    def _row(self, rows: Rows, obj: Any, where: str, context: dict[str, Any]) -> None:
        if rows.derive is not None:
            context = {**context, **rows.derive(obj, where)}
        if rows.table is not None:
            table, known = self.tables[rows.table.name], context
            if rows.numbered:
                known = {**context, rows.numbered: table.rows - self._marks[rows.table.name]}
            table.append([known[c] if c in known else read(obj, where) for c, read in rows.columns])
        for child in rows.children:
            self._walk(child, obj, where, context)
