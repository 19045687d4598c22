"""A row of the `spans` table as the terminal trace and the dashboard's waterfalls read it: a
span's label, whether it failed, when it started. (Nothing heavy is imported: `ces-pipeline
trace` imports this at every command's start.)"""

from __future__ import annotations

from datetime import datetime
from typing import Any


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
