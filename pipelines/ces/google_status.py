"""A Google error's canonical code, reasons and retry delay, from a `google.rpc.Status` in any shape
MCP brings it: an HTTP error body (its `code` the HTTP status), a JSON-RPC error's `data`, a tool
result's `structuredContent`, or text (the Status as JSON, or `UNAVAILABLE: the backend is busy`)."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

import orjson

from pipelines.protojson.timeparse import TimeFormatError, parse_duration_seconds

CANONICAL_CODES = (
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
)
"""google.rpc.Code by number."""
_LEADING_CODE = re.compile(r"\s*(?:error\s*:\s*)?([A-Z][A-Z_]+[A-Z])\b")


@dataclass(frozen=True)
class GoogleStatus:
    """The parts of a `google.rpc.Status` that decide what to do next (all optional)."""

    code: str | None = None
    reasons: frozenset[str] = frozenset()
    retry_delay: float | None = None
    """Seconds, from a `google.rpc.RetryInfo` detail."""


NO_STATUS = GoogleStatus()


def google_status(value: Any) -> GoogleStatus:
    """The Status `value` carries (a dict, `{"error": ...}`, its JSON, text led by a code), or `NO_STATUS`."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                return google_status(orjson.loads(text))
            except orjson.JSONDecodeError:
                pass
        match = _LEADING_CODE.match(text)
        code = match.group(1) if match and match.group(1) in CANONICAL_CODES else None
        return GoogleStatus(code) if code else NO_STATUS
    if not isinstance(value, dict):
        return NO_STATUS
    if isinstance(value.get("error"), dict):
        value = value["error"]
    code = value.get("status")
    if not (isinstance(code, str) and code in CANONICAL_CODES):
        number = value.get("code")
        # A Google API error body's `code` is the HTTP status; a Status's is 0 to 16.
        code = (
            CANONICAL_CODES[number]
            if isinstance(number, int) and 0 <= number < len(CANONICAL_CODES)
            else None
        )
    if code is None and isinstance(value.get("message"), str):
        code = google_status(value["message"]).code
    reasons, delay = set(), None
    for detail in value.get("details") or ():
        if not isinstance(detail, dict):
            continue
        if isinstance(detail.get("reason"), str):
            reasons.add(detail["reason"])
        if isinstance(detail.get("retryDelay"), str):
            with contextlib.suppress(TimeFormatError):
                delay = max(0.0, parse_duration_seconds(detail["retryDelay"]))
    return GoogleStatus(code, frozenset(reasons), delay)
