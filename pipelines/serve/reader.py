"""Reading the warehouse for an agent: read-only, one connection per question, and every answer
bounded in rows, bytes and seconds (`ServeSettings`), saying so when it was cut.

A read-only connection sees the warehouse as last published (a DuckDB file) or its current
snapshot (a DuckLake), so a load running meanwhile is never blocked and never seen half-done."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import duckdb
import msgspec

from pipelines.config import ServeSettings
from pipelines.errors import UsageError
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import JSON_ENCODER, json_lines


class AnswerError(UsageError):
    """A question the warehouse cannot answer as asked; the message is what the agent reads."""


@dataclass
class Rows:
    """Rows as JSON objects, `note` saying why there are no more when the caps cut them."""

    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None


@dataclass(frozen=True)
class WarehouseReader:
    warehouse: Warehouse
    limits: ServeSettings

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection whose queries are interrupted after `timeout_seconds` in all."""
        seconds = self.limits.timeout_seconds
        with self.warehouse.connect(read_only=True) as conn:
            timer = threading.Timer(seconds, conn.interrupt)
            timer.daemon = True
            timer.start()
            try:
                yield conn
            except duckdb.InterruptException as exc:
                raise AnswerError(
                    f"stopped after {seconds:g} s (CES_SERVE_TIMEOUT_SECONDS): ask for less, "
                    "e.g. one app or a shorter window"
                ) from exc
            finally:
                timer.cancel()

    def collect(self, columns: Sequence[str], cursor: duckdb.DuckDBPyConnection) -> Rows:
        """Fetch rows until the row or byte cap; the note says which cap cut them."""
        found = Rows(list(columns))
        size = 2
        fetched = cursor.fetchmany(self.limits.max_rows + 1)
        for encoded in json_lines(columns, fetched).splitlines():
            if len(found.rows) == self.limits.max_rows:
                found.note = (
                    f"only the first {self.limits.max_rows} rows (CES_SERVE_MAX_ROWS): narrow the question"
                )
                break
            size += len(encoded) + 1
            if size > self.limits.max_bytes:
                found.note = (
                    f"only the first {len(found.rows)} rows: the answer reached {self.limits.max_bytes} "
                    "bytes (CES_SERVE_MAX_BYTES); narrow the question"
                )
                break
            found.rows.append(msgspec.json.decode(encoded))
        return found

    def fits(self, answer: Any) -> bool:
        """Whether `answer` (JSON-ready) is within the byte cap."""
        return len(JSON_ENCODER.encode(answer)) <= self.limits.max_bytes


def text_table(columns: Sequence[str], rows: Sequence[dict[str, Any]], width: int = 40) -> str:
    """A compact pipe table for an agent to read; a value over `width` characters keeps its start
    and its end (a resource name's last segment is what tells names apart)."""

    def cell(value: Any) -> str:
        text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", " ").replace("|", "/")
        half = width // 2
        return text if len(text) <= width else f"{text[: half - 1]}…{text[-half:]}"

    lines = [" | ".join(columns), " | ".join("---" for _ in columns)]
    lines.extend(" | ".join(cell(row[column]) for column in columns) for row in rows)
    return "\n".join(lines)
