"""Which partitions the schedules ask for."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import dagster as dg

from pipelines.orchestration.schedules import conversations_hourly, days_to_refresh


def test_hourly_refreshes_today_and_the_lookback_days() -> None:
    now = datetime(2026, 11, 29, 0, 5, tzinfo=UTC)
    assert days_to_refresh(now, 2, date(2026, 1, 1)) == [
        date(2026, 11, 27),
        date(2026, 11, 28),
        date(2026, 11, 29),
    ]
    assert days_to_refresh(now, 0, date(2026, 1, 1)) == [date(2026, 11, 29)]


def test_the_day_is_the_utc_day_whatever_the_clock_zone() -> None:
    late_evening_in_new_york = datetime(2026, 11, 28, 21, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert days_to_refresh(late_evening_in_new_york, 0, date(2026, 1, 1)) == [date(2026, 11, 29)]


def test_no_day_before_the_first_partition() -> None:
    now = datetime(2026, 1, 1, 10, tzinfo=UTC)
    assert days_to_refresh(now, 2, date(2026, 1, 1)) == [date(2026, 1, 1)]


def test_the_schedule_requests_one_keyed_run_per_day() -> None:
    context = dg.build_schedule_context(scheduled_execution_time=datetime(2026, 11, 29, 13, 5, tzinfo=UTC))
    requests = conversations_hourly(context)
    assert [r.partition_key for r in requests] == ["2026-11-27", "2026-11-28", "2026-11-29"]
    assert requests[0].run_key == "2026-11-27@20261129T1305"
