"""RFC 3339 timestamps and duration strings: every offset and precision, and clear errors."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from pipelines.protojson.timeparse import TimeFormatError, parse_duration_seconds, parse_timestamp_micros

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(value: datetime) -> int:
    return (value - EPOCH) // timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2014-10-02T15:01:23Z", datetime(2014, 10, 2, 15, 1, 23, tzinfo=UTC)),
        ("2014-10-02T15:01:23.045123456Z", datetime(2014, 10, 2, 15, 1, 23, 45123, tzinfo=UTC)),
        ("2014-10-02T15:01:23+05:30", datetime(2014, 10, 2, 9, 31, 23, tzinfo=UTC)),
        ("2014-10-02T15:01:23.5-08:00", datetime(2014, 10, 2, 23, 1, 23, 500000, tzinfo=UTC)),
        ("2024-02-29T23:59:59.999999999z", datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC)),
        ("2026-01-01T00:30:00+01:00", datetime(2025, 12, 31, 23, 30, tzinfo=UTC)),
        ("1969-12-31T23:59:59.5Z", datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)),
        ("2014-10-02T15:01:23+0530", datetime(2014, 10, 2, 9, 31, 23, tzinfo=UTC)),  # no colon
        ("2016-12-31T23:59:60Z", datetime(2017, 1, 1, tzinfo=UTC)),  # a leap second
        ("2016-12-31T23:59:60.25Z", datetime(2017, 1, 1, 0, 0, 0, 250000, tzinfo=UTC)),
    ],
)
def test_timestamps_become_utc_microseconds(text: str, expected: datetime) -> None:
    assert parse_timestamp_micros(text) == micros(expected)


def test_every_fraction_width_matches_datetime() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        instant = EPOCH + timedelta(microseconds=rng.randrange(0, 4_000_000_000_000_000))
        digits = rng.randrange(0, 10)
        offset_minutes = rng.choice([0, 330, -480, 60, -30, 840])
        local = instant.astimezone(timezone(timedelta(minutes=offset_minutes)))
        fraction = f"{local.microsecond:06d}{rng.randrange(1000):03d}"[:digits]
        zone = "Z" if offset_minutes == 0 else local.strftime("%z")[:3] + ":" + local.strftime("%z")[3:]
        text = local.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if digits else "") + zone
        truncated = instant.replace(microsecond=int(fraction[:6].ljust(6, "0")) if digits else 0)
        assert parse_timestamp_micros(text) == micros(truncated), text


@pytest.mark.parametrize(
    "text",
    [
        "2014-10-02",
        "2014-10-02T15:01:23",
        "2014-02-30T00:00:00Z",
        "2014-10-02T24:00:00Z",
        "2014-10-02T15:01:61Z",
        "2014-10-02T15:01:23.1234567890Z",
        "2014-10-02T15:01:23+5:30",
        "yesterday",
        "",
    ],
)
def test_bad_timestamps_are_refused_with_the_value(text: str) -> None:
    with pytest.raises(TimeFormatError, match=r"timestamp|date|time of day"):
        parse_timestamp_micros(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("3.5s", 3.5), ("0.000000001s", 1e-9), ("1s", 1.0), ("-1.25s", -1.25), ("1.450s", 1.45), ("0s", 0.0)],
)
def test_durations_become_seconds(text: str, seconds: float) -> None:
    assert parse_duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["1.5", "1.5ms", "abc", "1.0000000001s", "", "s"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(TimeFormatError, match="duration"):
        parse_duration_seconds(text)
