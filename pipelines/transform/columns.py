"""The flatteners' column buffers, converted to Arrow a column at a time; a conversation batch's
times and JSON checked on the way (row by row only to say which value fails, and why), its span
and chunk positions from owner counts."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from msgspec import Raw

from pipelines.protojson.timeparse import (
    TimeFormatError,
    duration_column,
    parse_duration_seconds,
    parse_timestamp_nanos,
    timestamp_column,
)
from pipelines.transform.schemas import (
    CHUNKS,
    CONVERSATION_TABLES,
    CONVERSATIONS,
    JSON,
    MESSAGES,
    SPANS,
    TIMESTAMP,
    TURNS,
    TableSpec,
)

_OPEN_BRACE, _LETTER_N = ord("{"), ord("n")
_STRUCT_KINDS = frozenset({"payload", "updated_variables", "default_variables"})
"""Chunk kinds whose payload is a Struct (a JSON object); a kind added later may hold any JSON."""
_MAX_STRING_BYTES = 2**31 - 1

TIMESTAMP_COLUMNS = {
    spec.name: [f.name for f in spec.schema if f.type == TIMESTAMP] for spec in CONVERSATION_TABLES
}
DURATION_COLUMNS = {"turns": ("duration_seconds",), "spans": ("duration_seconds",)}


@dataclass(frozen=True)
class Positions:
    """A child table's position columns: `count` rows per owner, repeating its `inherited` columns, from 0."""

    owner: str
    count: str
    inherited: tuple[str, ...]
    position: str


POSITIONS = {
    SPANS.name: Positions(TURNS.name, "span_count", ("turn_index",), "span_id"),
    CHUNKS.name: Positions(MESSAGES.name, "chunk_count", ("turn_index", "message_index"), "chunk_index"),
}


def derived_columns(spec: TableSpec) -> set[str]:
    """The columns of a conversation table filled when its batch is converted, not by the walk."""
    derived = {"conversation_name"} | ({"duration_seconds"} if spec is CONVERSATIONS else set())
    if spec.name in POSITIONS:
        positions = POSITIONS[spec.name]
        derived |= {*positions.inherited, positions.position}
    return derived


class TableColumns:
    """The value lists of one table, in its schema's order (but its `derived` columns, filled when a
    batch is converted), and where each object's rows end."""

    __slots__ = ("lists", "offsets", "spec")

    def __init__(self, spec: TableSpec, derived: Collection[str] = ()):
        self.spec = spec
        self.lists: dict[str, list[Any]] = {f.name: [] for f in spec.schema if f.name not in derived}
        self.offsets: list[int] = [0]
        """Row count after each conversation of the batch: which rows belong to which."""

    @property
    def rows(self) -> int:
        return len(next(iter(self.lists.values())))

    def append(self, row: Sequence[Any]) -> None:
        for values, value in zip(self.lists.values(), row, strict=True):
            values.append(value)

    def to_batch(self) -> pa.RecordBatch:
        """Every column converted to its type as it is (a table without derived columns)."""
        schema = self.spec.schema
        arrays = [pa.array(self.lists[field.name], type=field.type) for field in schema]
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def truncate(self, rows: int) -> None:
        for values in self.lists.values():
            del values[rows:]

    def keep(self, conversations: Sequence[int]) -> None:
        spans = [(self.offsets[i], self.offsets[i + 1]) for i in conversations]
        for values in self.lists.values():  # in place: the walk holds each list's `append`
            values[:] = [value for start, end in spans for value in values[start:end]]
        self.offsets = [0, *np.cumsum([end - start for start, end in spans], dtype=np.int64).tolist()]

    def clear(self) -> None:
        for values in self.lists.values():
            values.clear()
        self.offsets[1:] = []

    def owners(self, rows: np.ndarray) -> np.ndarray:
        """The index in the batch of the conversation each of these rows belongs to."""
        return np.searchsorted(np.asarray(self.offsets, dtype=np.int64), rows, side="right") - 1


def positioned(owner: pa.RecordBatch, positions: Positions, rows: int) -> dict[str, pa.Array]:
    counts = owner.column(positions.count).to_numpy(zero_copy_only=False)
    owner_rows = np.repeat(np.arange(len(counts)), counts)
    run_starts = np.cumsum(counts) - counts
    columns = {name: owner.column(name).take(owner_rows) for name in positions.inherited}
    columns[positions.position] = pa.array((np.arange(rows) - run_starts[owner_rows]).astype(np.int32))
    return columns


def check_column(
    spec: TableSpec, column: str, lists: dict[str, list[Any]]
) -> tuple[dict[int, str], pa.Array]:
    """The failing rows of a timestamp, duration or JSON column, with why; and the column converted."""
    values = lists[column]
    if column in spec.json_columns:
        return _bad_json(values, lists["chunk_type"] if spec is CHUNKS else None)
    strings = pa.array(values, type=pa.string())
    if column in DURATION_COLUMNS.get(spec.name, ()):
        seconds = duration_column(strings)
        if seconds is not None:
            return {}, seconds
        parse: Callable[[str], Any] = parse_duration_seconds
    else:
        micros = timestamp_column(strings)
        if micros is not None:
            return {}, micros.cast(TIMESTAMP)
        parse = parse_timestamp_nanos
    bad, parsed = {}, []
    for row, value in enumerate(values):
        try:
            parsed.append(None if value is None else parse(value))
        except TimeFormatError as exc:
            bad[row] = str(exc)
            parsed.append(None)
    if parse is parse_duration_seconds:
        return bad, pa.array(parsed, pa.float64())
    return bad, pa.array([None if n is None else n // 1_000 for n in parsed], pa.int64()).cast(TIMESTAMP)


def _bad_json(values: list[Raw], kinds: list[str | None] | None) -> tuple[dict[int, str], pa.Array]:
    """Rows of a JSON column neither an object (a Struct) nor null, judged by the first byte
    (msgspec hands out only well-formed JSON), or not UTF-8. Of a chunk's payloads only the
    Struct kinds must be objects: a kind added to the API later may hold any JSON."""
    column, first, lengths = _json_texts(values, JSON)
    allowed = (lengths == 0) | (first == _OPEN_BRACE) | ((first == _LETTER_N) & (lengths == 4))
    if kinds is not None:
        allowed |= ~np.isin(np.asarray(kinds, dtype=object), list(_STRUCT_KINDS))
    bad = dict.fromkeys(np.flatnonzero(~allowed).tolist(), "expected an object (Struct)")
    try:
        column.validate(full=True)
    except pa.ArrowInvalid:
        for row, value in enumerate(values):
            try:
                bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                bad.setdefault(row, "not UTF-8")
    return bad, column


def seconds_between(starts: list[str | None], ends: list[str | None]) -> pa.Array:
    """`end - start` in seconds from every digit sent (null where either is absent), in Python
    ints: protobuf allows instants int64 nanoseconds cannot hold (before 1677, after 2262)."""
    nanos = parse_timestamp_nanos
    gaps = [
        None if s is None or e is None else (nanos(e) - nanos(s)) / 1e9
        for s, e in zip(starts, ends, strict=True)
    ]
    return pa.array(gaps, pa.float64())


def _json_texts(values: list[Raw], type_: pa.DataType) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The JSON column, and each text's first byte (0 when absent) and length."""
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    joined = b"".join(values)
    data = np.frombuffer(joined, dtype=np.uint8)
    sent = lengths > 0
    first = np.zeros(len(values), dtype=np.uint8)
    first[sent] = data[offsets[:-1][sent]]
    valid = sent & ~((first == _LETTER_N) & (lengths == 4))
    if offsets[-1] > _MAX_STRING_BYTES:  # more text than a string column's 32-bit offsets reach
        texts = [
            bytes(value).decode() if ok else None for value, ok in zip(values, valid.tolist(), strict=True)
        ]
        return pa.array(texts, pa.large_string()).cast(type_), first, lengths
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    column = pa.Array.from_buffers(
        type_, len(values), [validity, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(joined)]
    )
    return column, first, lengths
