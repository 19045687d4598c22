"""RFC 3339 timestamps and protobuf duration strings, parsed without a `datetime` per value.

CES emits Z-normalised timestamps with 0, 3, 6 or 9 fractional digits but accepts (and other
servers may send) any offset, read leniently as protobuf JSON parsers do: `+05:30` or `+0530`,
and a leap second `:60`, which is the first instant of the next minute. Values become integer
microseconds since the epoch, UTC; the sub-microsecond digits are truncated toward the past.
Durations ("3.5s", "-0.25s", "0.000000001s") become float seconds.
"""

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
    """Microseconds since 1970-01-01T00:00:00Z for an RFC 3339 string with any offset.

    Sub-microsecond digits are truncated toward the past (floor), as stored in the warehouse.
    """
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


def parse_duration_seconds(value: str) -> float:
    """Seconds as a float for a protobuf JSON duration such as "1.450s"."""
    if not isinstance(value, str) or _DURATION.fullmatch(value) is None:
        raise TimeFormatError(f"not a protobuf duration: {str(value)[:80]!r}")
    return float(value[:-1])


# -- whole columns at once (Arrow compute) ------------------------------------------------------
#
# The flattener keeps timestamp and duration strings as they came and converts a batch's
# column in one go. A column function returns None unless it can vouch for every value: then
# the caller parses the batch with the per-value functions above, so the column path never
# decides differently. It handles the canonical ASCII spellings exactly and leaves the rest
# (non-ASCII digits, years before 1000, invalid dates, out-of-range offsets) to them.

_TS_SHAPE = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$"
_TS_TAIL = r"^(?:\.(?P<f>\d{1,9}))?(?:[Zz]|(?P<s>[+-])(?P<h>\d{2}):(?P<m>\d{2}))$"
_DURATION_SHAPE = r"^-?\d+(?:\.\d{1,9})?s$"
_MICROS = 1_000_000


def _all(mask: pa.Array) -> bool:
    """True when every non-null value of a boolean array is true."""
    return bool(pc.all(mask).as_py() is not False)


_UTC_LENGTHS = pa.array([20, *range(22, 31)], pa.int32())
"""Byte lengths of YYYY-MM-DD[T ]hh:mm:ss[.f{1,9}]Z: no fraction, or 1 to 9 digits of one."""


def _utc_nanos(values: pa.Array) -> pa.Array | None:
    """Nanoseconds since the epoch (int64, none before 1970) for a column in the spelling CES
    sends, `YYYY-MM-DDThh:mm:ss[.fffffffff]Z`, by Arrow's ISO 8601 cast: ten times faster
    than the general path below. None when a value is spelled otherwise.

    With the trailing Z and those lengths, the strings Arrow's cast accepts are exactly the
    ones the per-value parser accepts in that spelling (it checks the digits, month lengths
    and the time of day alike); an offset, a lower-case t or z, non-ASCII digits, a year out
    of the nanosecond range or an instant before 1970 (whose microseconds round toward the
    past) go to the general path.
    """
    lengths = pc.binary_length(values).fill_null(20)
    if not (_all(pc.ends_with(values, "Z")) and _all(pc.is_in(lengths, _UTC_LENGTHS))):
        return None
    try:
        nanos = pc.cast(values, pa.timestamp("ns", "UTC")).cast(pa.int64())
    except pa.ArrowInvalid:
        return None
    earliest = pc.min(nanos).as_py()
    return nanos if earliest is None or earliest >= 0 else None


def timestamp_column(values: pa.Array, *, nanos: bool = False) -> pa.Array | None:
    """Microseconds (or, with `nanos`, nanoseconds) since the epoch (int64, nulls kept) for a
    string column, or None.

    Same values as `parse_timestamp_micros` (`parse_timestamp_nanos`) for every string it
    accepts; None whenever one string is not of the canonical shape or would not parse.
    """
    scale, digits = (1_000_000_000, 9) if nanos else (_MICROS, 6)
    if values.null_count == len(values):
        return pa.nulls(len(values), pa.int64())
    fast = _utc_nanos(values)
    if fast is not None:
        return fast if nanos else pc.divide(fast, 1_000)
    if not _all(pc.match_substring_regex(values, _TS_SHAPE)):
        return None
    base = pc.utf8_slice_codeunits(values, 0, 19)
    if not _all(pc.greater_equal(pc.utf8_slice_codeunits(base, 0, 4), "1000")):
        return None
    if not _all(pc.equal(pc.utf8_slice_codeunits(base, 10, 11), "T")):
        base = pc.utf8_replace_slice(base, 10, 11, "T")
    try:
        # The strict cast refuses an invalid date or time of day (Feb 30, 24:00, :60).
        seconds = pc.cast(pc.cast(base, pa.timestamp("s")), pa.int64())
    except pa.ArrowInvalid:
        return None
    micros = pc.multiply(seconds, scale)
    if _all(pc.ends_with(values, "Z")):
        fraction = pc.utf8_slice_codeunits(values, 20, -1)  # "" or the digits after the dot
        offset = None
    else:
        tail = pc.extract_regex(pc.utf8_slice_codeunits(values, 19), _TS_TAIL)
        fraction = tail.field("f")
        hours = pc.cast(pc.if_else(pc.equal(tail.field("h"), ""), "0", tail.field("h")), pa.int64())
        minutes = pc.cast(pc.if_else(pc.equal(tail.field("m"), ""), "0", tail.field("m")), pa.int64())
        if not (_all(pc.less_equal(hours, 23)) and _all(pc.less_equal(minutes, 59))):
            return None
        offset = pc.multiply(pc.add(pc.multiply(hours, 3600), pc.multiply(minutes, 60)), scale)
        offset = pc.if_else(pc.equal(tail.field("s"), "-"), pc.negate(offset), offset)
    fraction = pc.cast(pc.utf8_slice_codeunits(pc.utf8_rpad(fraction, digits, "0"), 0, digits), pa.int64())
    micros = pc.add(micros, fraction)
    return micros if offset is None else pc.subtract(micros, offset)


def duration_column(values: pa.Array) -> pa.Array | None:
    """Seconds (float64, nulls kept) for a column of protobuf duration strings, or None."""
    if values.null_count == len(values):
        return pa.nulls(len(values), pa.float64())
    if not _all(pc.match_substring_regex(values, _DURATION_SHAPE)):
        return None
    return pc.cast(pc.utf8_slice_codeunits(values, 0, -1), pa.float64())
