"""How much synthetic data the simulator serves, and the resource names that follow from it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

NAMED_APP_IDS = ("support-bot", "sales-bot")
"""The first apps get readable ids; further ones are `app-3`, `app-4`, ..."""


@dataclass(frozen=True)
class SimulatorScale:
    """Size and shape of the synthetic corpus. Everything served is a pure function of these fields.

    Conversations start in the UTC window [start_date, start_date + days); each app holds
    `conversations_per_day` of them per day, with `min_turns`..`max_turns` turns whose span trees
    are at most `span_depth` levels deep (root included).
    """

    seed: int = 7
    apps: int = 2
    project: str = "sim-project"
    location: str = "us"
    start_date: date = date(2026, 11, 1)
    days: int = 3
    conversations_per_day: int = 24
    min_turns: int = 1
    max_turns: int = 8
    span_depth: int = 3
    evaluation_runs_per_app: int = 6
    incident_day: int | None = 9
    """The day (counted from start_date) on which the first app's tools answer six times slower
    than on the others: an incident for `metric_anomalies` to find once a week of days precedes
    it (the demo's history has ten days). None: no incident."""

    def __post_init__(self) -> None:
        if self.apps < 1:
            raise ValueError(f"apps must be at least 1, got {self.apps}")
        if self.days < 1:
            raise ValueError(f"days must be at least 1, got {self.days}")
        if not 0 <= self.conversations_per_day <= 999_999:
            raise ValueError(
                f"conversations_per_day must be in [0, 999999], got {self.conversations_per_day}"
            )
        if self.min_turns < 1:
            raise ValueError(f"min_turns must be at least 1, got {self.min_turns}")
        if self.max_turns < self.min_turns:
            raise ValueError(f"max_turns must be at least min_turns ({self.min_turns}), got {self.max_turns}")
        if self.span_depth < 2:
            raise ValueError(f"span_depth must be at least 2 (root and its children), got {self.span_depth}")
        if self.evaluation_runs_per_app < 0:
            raise ValueError(
                f"evaluation_runs_per_app must not be negative, got {self.evaluation_runs_per_app}"
            )

    def has_incident(self, app: int, day: int) -> bool:
        """Whether the conversations of app index `app` on day index `day` live through the incident."""
        return app == 0 and day == self.incident_day

    @property
    def location_name(self) -> str:
        """`projects/{project}/locations/{location}`, the parent of apps and operations."""
        return f"projects/{self.project}/locations/{self.location}"

    @property
    def app_ids(self) -> tuple[str, ...]:
        return tuple(NAMED_APP_IDS[i] if i < len(NAMED_APP_IDS) else f"app-{i + 1}" for i in range(self.apps))

    @property
    def app_names(self) -> tuple[str, ...]:
        """Full app resource names, in app-index order."""
        return tuple(f"{self.location_name}/apps/{app_id}" for app_id in self.app_ids)

    @property
    def end_date(self) -> date:
        """The first day after the window."""
        return self.start_date + timedelta(days=self.days)

    @property
    def window(self) -> tuple[date, date]:
        """The half-open UTC day window [start_date, end_date) in which conversations start."""
        return self.start_date, self.end_date

    @property
    def conversation_count(self) -> int:
        return self.apps * self.days * self.conversations_per_day

    def app_index(self, app_name: str) -> int | None:
        """Position of `app_name` among `app_names`, or None when this scale serves no such app."""
        try:
            return self.app_names.index(app_name)
        except ValueError:
            return None
