"""RFC 3339 timestamps and protobuf duration strings, parsed without a `datetime` per value.

CES emits Z-normalised timestamps with 0, 3, 6 or 9 fractional digits but accepts (and other
servers may send) any offset. Values become integer microseconds since the epoch, UTC; the
sub-microsecond digits are truncated toward the past. Durations ("3.5s", "-0.25s",
"0.000000001s") become float seconds.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)
_DURATION = re.compile(r"-?\d+(?:\.\d{1,9})?s")
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


class TimeFormatError(ValueError):
    """A timestamp or duration string that does not follow the protobuf JSON encoding."""


@lru_cache(maxsize=8192)
def _epoch_day(year: int, month: int, day: int) -> int:
    try:
        return date(year, month, day).toordinal() - _EPOCH_ORDINAL
    except ValueError as exc:
        raise TimeFormatError(f"invalid date {year:04d}-{month:02d}-{day:02d}: {exc}") from None


def parse_timestamp_micros(value: str) -> int:
    """Microseconds since 1970-01-01T00:00:00Z for an RFC 3339 string with any offset."""
    match = _TIMESTAMP.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise TimeFormatError(f"not an RFC 3339 timestamp: {str(value)[:80]!r}")
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    hour_i, minute_i, second_i = int(hour), int(minute), int(second)
    if hour_i > 23 or minute_i > 59 or second_i > 59:
        raise TimeFormatError(f"time of day out of range: {value[:80]!r}")
    seconds = _epoch_day(int(year), int(month), int(day)) * 86400 + hour_i * 3600 + minute_i * 60 + second_i
    if not zulu:
        off_hi, off_mi = int(off_h), int(off_m)
        if off_hi > 23 or off_mi > 59:
            raise TimeFormatError(f"offset out of range: {value[:80]!r}")
        offset = off_hi * 3600 + off_mi * 60
        seconds -= offset if sign == "+" else -offset
    micros = int((fraction or "").ljust(6, "0")[:6]) if fraction else 0
    return seconds * 1_000_000 + micros


def parse_duration_seconds(value: str) -> float:
    """Seconds as a float for a protobuf JSON duration such as "1.450s"."""
    if not isinstance(value, str) or _DURATION.fullmatch(value) is None:
        raise TimeFormatError(f"not a protobuf duration: {str(value)[:80]!r}")
    return float(value[:-1])
