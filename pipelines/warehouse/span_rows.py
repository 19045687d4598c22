"""A row of the `spans` table as the terminal trace and the dashboard's waterfalls read it: one
conversation's spans, a span's label and whether it failed. (DuckDB and pyarrow are not imported
at the start: `ces-pipeline trace` imports this at every command's start.)"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pipelines.sqlfiles import sql_text

if TYPE_CHECKING:
    import duckdb


def span_label(span: dict[str, Any]) -> str:
    """The span's name with what it is about (its model, tool name or callback stage), once."""
    attributes = span.get("attributes") if isinstance(span.get("attributes"), dict) else {}
    subject = next((attributes[key] for key in ("model", "name", "stage") if attributes.get(key)), None)
    return f"{span['name']} {subject}" if subject and str(subject) not in span["name"] else span["name"]


def span_failed(span: dict[str, Any]) -> bool:
    """Whether the span failed: an `error` attribute, or an HTTP status of 400 or more."""
    attributes = span.get("attributes") if isinstance(span.get("attributes"), dict) else {}
    status = attributes.get("http status")
    return bool(attributes.get("error")) or (isinstance(status, int | float) and status >= 400)


def span_start(span: dict[str, Any]) -> float:
    """The span's start as seconds since the epoch (its `start_time` as JSON rows give it)."""
    return datetime.fromisoformat(span["start_time"]).timestamp()


def conversation_spans(conn: duckdb.DuckDBPyConnection, name: str, day: Any) -> list[dict[str, Any]]:
    """The spans of the conversation `name` of partition `day` (one day's part read), each turn's
    in pre-order, as JSON rows (attributes as JSON values)."""
    from pipelines.transform.schemas import SPANS  # pyarrow: not at every command's start
    from pipelines.warehouse.queries import json_rows  # duckdb: likewise

    sql = sql_text("serve/conversation_rows.sql").format(table=SPANS.name, key=", ".join(SPANS.key))
    return json_rows(conn, sql, {"name": name, "day": day})
