"""RFC 3339 timestamps and protobuf durations, parsed without a `datetime` per value and as leniently
as protobuf JSON parsers (`+0530`, `:60` as the next minute); finer digits truncate toward the past."""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

import pyarrow as pa
import pyarrow.compute as pc

_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))"
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
    return parse_timestamp_nanos(value) // 1_000


def parse_timestamp_nanos(value: str) -> int:
    """Nanoseconds since 1970-01-01T00:00:00Z: every digit the API may send, for exact differences."""
    match = _TIMESTAMP.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise TimeFormatError(f"not an RFC 3339 timestamp: {str(value)[:80]!r}")
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    hour_i, minute_i, second_i = int(hour), int(minute), int(second)
    if hour_i > 23 or minute_i > 59 or second_i > 60:
        raise TimeFormatError(f"time of day out of range: {value[:80]!r}")
    seconds = _epoch_day(int(year), int(month), int(day)) * 86400 + hour_i * 3600 + minute_i * 60 + second_i
    if not zulu:
        off_hi, off_mi = int(off_h), int(off_m)
        if off_hi > 23 or off_mi > 59:
            raise TimeFormatError(f"offset out of range: {value[:80]!r}")
        offset = off_hi * 3600 + off_mi * 60
        seconds -= offset if sign == "+" else -offset
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    return seconds * 1_000_000_000 + nanos


def format_timestamp_nanos(nanos: int) -> str:
    """RFC 3339 in UTC as protobuf's JSON printer writes it: 0, 3, 6 or 9 fractional digits."""
    seconds, fraction = divmod(nanos, 1_000_000_000)
    day, second = divmod(seconds, 86400)
    whole = date.fromordinal(_EPOCH_ORDINAL + day).isoformat()
    text = f"{whole}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    if fraction:
        digits = f"{fraction:09d}"
        text += "." + (
            digits[:3] if fraction % 1_000_000 == 0 else digits[:6] if fraction % 1_000 == 0 else digits
        )
    return text + "Z"


def parse_duration_seconds(value: str) -> float:
    if not isinstance(value, str) or _DURATION.fullmatch(value) is None:
        raise TimeFormatError(f"not a protobuf duration: {str(value)[:80]!r}")
    return float(value[:-1])


# -- whole columns at once (Arrow compute) ------------------------------------------------------
# A column function returns None unless it vouches for every value: the caller then parses the
# batch with the per-value functions above, so the column path never decides differently.

_DURATION_SHAPE = r"^-?\d+(?:\.\d{1,9})?s$"
_UTC_LENGTHS = pa.array([20, *range(22, 31)], pa.int32())
"""Byte lengths of YYYY-MM-DD[T ]hh:mm:ss[.f{1,9}]Z: no fraction, or 1 to 9 digits of one."""


def _all(mask: pa.Array) -> bool:
    """True when every non-null value of a boolean array is true."""
    return bool(pc.all(mask).as_py() is not False)


def timestamp_column(values: pa.Array, *, nanos: bool = False) -> pa.Array | None:
    """Epoch micros (or nanos), int64, of a string column spelled as CES sends it
    (`YYYY-MM-DDThh:mm:ss[.fffffffff]Z`), by Arrow's cast, which then accepts exactly what the
    per-value parser does; None if any value is spelled otherwise (an offset, `z`, non-ASCII
    digits, a year outside the nanosecond range, before 1970) and is left to that parser."""
    if values.null_count == len(values):
        return pa.nulls(len(values), pa.int64())
    lengths = pc.binary_length(values).fill_null(20)
    if not (_all(pc.ends_with(values, "Z")) and _all(pc.is_in(lengths, _UTC_LENGTHS))):
        return None
    try:
        column = pc.cast(values, pa.timestamp("ns", "UTC")).cast(pa.int64())
    except pa.ArrowInvalid:
        return None
    earliest = pc.min(column).as_py()
    if earliest is not None and earliest < 0:
        return None
    return column if nanos else pc.divide(column, 1_000)


def duration_column(values: pa.Array) -> pa.Array | None:
    """Seconds (float64, nulls kept) for a column of protobuf duration strings, or None."""
    if values.null_count == len(values):
        return pa.nulls(len(values), pa.float64())
    if not _all(pc.match_substring_regex(values, _DURATION_SHAPE)):
        return None
    return pc.cast(pc.utf8_slice_codeunits(values, 0, -1), pa.float64())
