"""Checked proto3 JSON readers, as loose as proto3 JSON: the right type, or a `SchemaViolation` naming it."""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

import orjson

from pipelines.protojson import deepjson
from pipelines.protojson.timeparse import (
    TimeFormatError,
    format_timestamp_nanos,
    parse_duration_seconds,
    parse_timestamp_micros,
    parse_timestamp_nanos,
)
from pipelines.protojson.violations import SchemaViolation

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_URLSAFE = bytes.maketrans(b"-_", b"+/")


def text(value: Any, field: str) -> str | None:
    if value is None or type(value) is str:
        return value
    raise SchemaViolation(f"{field}: expected a string, got {type(value).__name__}")


def int32(value: Any, field: str) -> int:
    """An int32 field; absent means 0 (proto3 omits zero)."""
    if value is None:
        return 0
    if type(value) is int:
        number = value
    elif type(value) is str:
        try:
            number = int(value)
        except ValueError:
            raise SchemaViolation(f"{field}: expected an integer, got {value[:40]!r}") from None
    elif type(value) is float and value.is_integer():
        number = int(value)
    else:
        raise SchemaViolation(f"{field}: expected an integer, got {type(value).__name__}")
    if not _INT32_MIN <= number <= _INT32_MAX:
        raise SchemaViolation(f"{field}: {number} is outside the int32 range")
    return number


_NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def double(value: Any, field: str) -> float:
    """A float or double field: a JSON number, a numeric string, or NaN/Infinity as proto3 JSON
    spells them; absent means 0.0 (proto3 omits zero)."""
    if value is None:
        return 0.0
    if type(value) in (int, float):
        return float(value)
    if type(value) is str:
        if value in _NON_FINITE:
            return _NON_FINITE[value]
        try:
            return float(value)
        except ValueError:
            raise SchemaViolation(f"{field}: expected a number, got {value[:40]!r}") from None
    raise SchemaViolation(f"{field}: expected a number, got {type(value).__name__}")


def boolean(value: Any, field: str) -> bool:
    """A bool field; absent means false."""
    if value is None or type(value) is bool:
        return bool(value)
    raise SchemaViolation(f"{field}: expected true or false, got {type(value).__name__}")


def _parsed(parse: Callable[[str], Any], value: Any, field: str) -> Any:
    if value is None:
        return None
    try:
        return parse(value)
    except TimeFormatError as exc:
        raise SchemaViolation(f"{field}: {exc}") from None


def timestamp(value: Any, field: str) -> int | None:
    """Microseconds since the epoch (UTC), sub-microsecond digits floored, or None when absent."""
    return _parsed(parse_timestamp_micros, value, field)


def timestamp_text(value: Any, field: str) -> str | None:
    """A timestamp as Google's JSON printer writes it (UTC, `Z`, 0, 3, 6 or 9 fractional digits),
    every digit kept, whichever offset or form it was sent in."""
    if value is None:
        return None
    return format_timestamp_nanos(_parsed(parse_timestamp_nanos, value, field))


def duration(value: Any, field: str) -> float | None:
    return _parsed(parse_duration_seconds, value, field)


def array(value: Any, field: str) -> list[Any]:
    if value is None:
        return []
    if type(value) is list:
        return value
    raise SchemaViolation(f"{field}: expected an array, got {type(value).__name__}")


def message(value: Any, field: str) -> dict[str, Any]:
    """A nested message; absent means empty."""
    if value is None:
        return {}
    if type(value) is dict:
        return value
    raise SchemaViolation(f"{field}: expected an object, got {type(value).__name__}")


def json_text(value: Any, field: str) -> str:
    try:
        return deepjson.dumps(value).decode()
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise SchemaViolation(f"{field}: cannot be serialised as JSON ({exc})") from None


def base64_size(value: Any, field: str) -> int:
    """Decoded size of a bytes field: base64 or URL-safe, padding optional, spaces ignored, as protobuf."""
    if value is None:
        return 0
    return len(base64_bytes(value, field))


def base64_bytes(value: Any, field: str) -> bytes:
    """The bytes of a bytes field, read as `base64_size` reads them."""
    if type(value) is not str:
        raise SchemaViolation(f"{field}: expected base64 text, got {type(value).__name__}")
    raw = b"".join(value.encode("ascii", "replace").split()).translate(_URLSAFE)
    raw += b"=" * (-len(raw) % 4)
    try:
        return binascii.a2b_base64(raw, strict_mode=True)
    except binascii.Error as exc:
        raise SchemaViolation(f"{field}: invalid base64 ({exc})") from None
