"""An ingest's UTC [since, until) on `startTime`: an AIP-160 filter servers may ignore, so checked here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _micros(value: datetime) -> int:
    return int((value - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(microseconds=1))


@dataclass(frozen=True)
class TimeWindow:
    """Conversations whose `startTime` lies in [since, until), both UTC."""

    since: datetime
    until: datetime

    def __post_init__(self) -> None:
        object.__setattr__(self, "since", _utc(self.since))
        object.__setattr__(self, "until", _utc(self.until))
        if self.until <= self.since:
            raise ValueError(f"empty window: until ({self.until}) must be after since ({self.since})")

    @classmethod
    def for_days(cls, first: date, end: date) -> TimeWindow:
        """Whole UTC days [first, end)."""
        return cls(datetime.combine(first, time(), UTC), datetime.combine(end, time(), UTC))

    @classmethod
    def for_day(cls, day: date) -> TimeWindow:
        return cls.for_days(day, day + timedelta(days=1))

    @property
    def since_micros(self) -> int:
        return _micros(self.since)

    @property
    def until_micros(self) -> int:
        return _micros(self.until)

    def aip160_filter(self) -> str:
        """The filter the server is asked to apply (the client re-checks every row)."""
        since, until = (moment.isoformat().replace("+00:00", "Z") for moment in (self.since, self.until))
        return f'start_time >= "{since}" AND start_time < "{until}"'


def lacks_traces(conversation: dict[str, Any]) -> bool:
    """A listing without spans: no turns though `turnCount` promises some, or a turn without `rootSpan`."""
    turns = conversation.get("turns")
    if not turns:
        try:
            return int(conversation.get("turnCount") or 0) > 0
        except (TypeError, ValueError):
            return False
    return any(not isinstance(turn, dict) or turn.get("rootSpan") is None for turn in turns)
