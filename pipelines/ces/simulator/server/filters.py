"""The AIP-160 filter subsets the simulated list tools understand.

`list_conversations` takes comparisons of `start_time` with RFC 3339 strings joined by AND
(the form Google's own scripting library sends); the evaluation list tools take equality on a
few fields. Anything else is refused with INVALID_ARGUMENT and a message saying what is
supported, rather than silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from pipelines.ces.simulator.corpus.protojson import NANOS_PER_DAY, NANOS_PER_SECOND
from pipelines.ces.simulator.server.errors import ToolError

_AND = re.compile(r"\s+AND\s+")
_COMPARISON = re.compile(r'\s*start_time\s*(>=|<=|>|<)\s*"([^"]*)"\s*')
_EQUALITY = re.compile(r'\s*([a-z_]+)\s*=\s*(?:"([^"]*)"|([A-Za-z0-9_./-]+))\s*')
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


@dataclass(frozen=True)
class StartTimeRange:
    """Half-open [lower, upper) in nanoseconds since the epoch; None means unbounded."""

    lower: int | None = None
    upper: int | None = None

    def contains(self, instant: int) -> bool:
        return (self.lower is None or instant >= self.lower) and (self.upper is None or instant < self.upper)


def parse_rfc3339_nanos(value: str) -> int:
    """Nanoseconds since the epoch for an RFC 3339 timestamp with any offset (exact to the nanosecond)."""
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise ToolError("INVALID_ARGUMENT", f"invalid filter: {value!r} is not an RFC 3339 timestamp")
    year, month, day, hour, minute, second, fraction, zulu, sign, off_hour, off_minute = match.groups()
    try:
        days = date(int(year), int(month), int(day)).toordinal() - _EPOCH_ORDINAL
    except ValueError as exc:
        raise ToolError("INVALID_ARGUMENT", f"invalid filter: {value!r}: {exc}") from None
    if int(hour) > 23 or int(minute) > 59 or int(second) > 60:
        raise ToolError("INVALID_ARGUMENT", f"invalid filter: {value!r} has an invalid time of day")
    seconds = int(hour) * 3600 + int(minute) * 60 + int(second)
    if not zulu:
        offset = int(off_hour) * 3600 + int(off_minute) * 60
        seconds -= offset if sign == "+" else -offset
    return days * NANOS_PER_DAY + seconds * NANOS_PER_SECOND + int((fraction or "").ljust(9, "0"))


def parse_start_time_filter(text: str) -> StartTimeRange:
    """`start_time OP "RFC3339" [AND start_time OP "RFC3339" ...]` with OP one of >=, >, <=, <."""
    if not text.strip():
        return StartTimeRange()
    lower: int | None = None
    upper: int | None = None
    for clause in _AND.split(text.strip()):
        match = _COMPARISON.fullmatch(clause)
        if match is None:
            raise ToolError(
                "INVALID_ARGUMENT",
                f"invalid filter {text!r}: supported is start_time compared (>=, >, <=, <) with a quoted "
                'RFC 3339 timestamp, joined by AND, e.g. start_time >= "2026-11-01T00:00:00Z"',
            )
        operator, value = match.groups()
        instant = parse_rfc3339_nanos(value)
        if operator in (">=", ">"):
            bound = instant + (operator == ">")
            lower = bound if lower is None else max(lower, bound)
        else:
            bound = instant + (operator == "<=")
            upper = bound if upper is None else min(upper, bound)
    return StartTimeRange(lower, upper)


def parse_equality_filter(text: str, fields: frozenset[str]) -> dict[str, str]:
    """`field = "value" [AND ...]` over `fields`; values may be unquoted enum names."""
    if not text.strip():
        return {}
    wanted: dict[str, str] = {}
    for clause in _AND.split(text.strip()):
        match = _EQUALITY.fullmatch(clause)
        if match is None or match.group(1) not in fields:
            raise ToolError(
                "INVALID_ARGUMENT",
                f"invalid filter {text!r}: supported is equality on {', '.join(sorted(fields))}, joined by "
                "AND, "
                'e.g. state = "COMPLETED"',
            )
        wanted[match.group(1)] = match.group(2) if match.group(2) is not None else match.group(3)
    return wanted
