"""Settings read from the environment (and a `.env` file), in one place.

Every knob a user sets lives here with its documented default, so the CLI, the Dagster
resources and the tests agree on names and meanings. The environment is read in one call,
`Settings.from_env()`, by the CLI and by the code location when Dagster loads it; nothing
reads it at import.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_MCP_URL = "https://ces.googleapis.com/mcp"
DEFAULT_MAX_RPS = 10.0
"""The documented CES read quota is 600 requests per minute per project."""

DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_RETRY_MAX_SECONDS = 120.0
DEFAULT_RETRY_BACKOFF_SECONDS = 0.5

APP_NAME_PATTERN = re.compile(r"^projects/[^/]+/locations/[^/]+/apps/[^/]+$")
EVALUATION_RUN_NAME_PATTERN = re.compile(r"^projects/[^/]+/locations/[^/]+/apps/[^/]+/evaluationRuns/[^/]+$")
KNOWN_SOURCES = ("LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL")
HYDRATE_POLICIES = ("auto", "always", "never")


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


def _split_csv(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True)
class CesSettings:
    """How to reach the CES MCP server. `access_token` is a secret: never log or store it."""

    mcp_url: str = DEFAULT_MCP_URL
    apps: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    access_token: str | None = field(default=None, repr=False)
    quota_project: str | None = None
    max_rps: float = DEFAULT_MAX_RPS
    timeout_seconds: float = 60.0
    """Read timeout: the longest silence tolerated while waiting for (or streaming) a response."""
    connect_timeout_seconds: float = 10.0
    request_deadline_seconds: float = 300.0
    """The longest one exchange may take in all, however steadily the server sends."""
    page_size: int = 100
    max_response_mb: int = 64
    """The largest response body (JSON, or one SSE event) read; a larger one is an error, not
    gigabytes of memory."""
    max_empty_pages: int = 20
    """Empty pages in a row, each with a next page token, before a listing is given up."""
    hydrate: str = "auto"
    """Which listed conversations `get_conversation` fetches in full: `auto` (those listed
    without their traces), `always`, or `never`."""
    evaluation_runs: tuple[str, ...] = ()
    """Evaluation runs always fetched, besides those `list_evaluation_runs` finds."""
    rate_limit_file: str | None = None
    """Where processes share the request rate (one limit for all); None: this process only."""
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    """Attempts per request, the first included, for calls that may be sent again (1: no retry)."""
    retry_max_seconds: float = DEFAULT_RETRY_MAX_SECONDS
    """No retry of a request starts later than this after its first attempt."""
    retry_backoff_seconds: float = DEFAULT_RETRY_BACKOFF_SECONDS
    """First backoff ceiling; it doubles per attempt (full jitter, at most 30 s)."""
    quota_retry_seconds: float = 90.0
    """A quota refusal (HTTP 429, RESOURCE_EXHAUSTED) is retried until this long after the first attempt."""

    def __post_init__(self) -> None:
        if self.access_token is not None:  # a secret mounted from a file ends in a newline
            object.__setattr__(self, "access_token", self.access_token.strip() or None)
        url = urlsplit(self.mcp_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ConfigError(
                f"CES_MCP_URL must be an http(s) URL such as {DEFAULT_MCP_URL}, got {self.mcp_url!r}"
            )
        unknown = sorted(set(self.sources) - set(KNOWN_SOURCES))
        if unknown:
            raise ConfigError(
                f"CES_SOURCES: unknown source {', '.join(unknown)}; known: {', '.join(KNOWN_SOURCES)}"
            )
        for app in self.apps:
            if not APP_NAME_PATTERN.match(app):
                raise ConfigError(
                    f"CES_APPS: {app!r} is not an app resource name "
                    "(projects/{project}/locations/{location}/apps/{app})"
                )
        for run in self.evaluation_runs:
            if not EVALUATION_RUN_NAME_PATTERN.match(run):
                raise ConfigError(
                    f"CES_EVALUATION_RUNS: {run!r} is not an evaluation run resource name "
                    "(projects/{project}/locations/{location}/apps/{app}/evaluationRuns/{run})"
                )
        if self.max_rps <= 0:
            raise ConfigError(f"CES_MAX_RPS must be positive, got {self.max_rps}")
        if self.page_size <= 0:
            raise ConfigError(f"CES_PAGE_SIZE must be positive, got {self.page_size}")
        if self.hydrate not in HYDRATE_POLICIES:
            raise ConfigError(f"CES_HYDRATE must be auto, always or never, got {self.hydrate!r}")
        if self.max_response_mb < 1:
            raise ConfigError(f"CES_MAX_RESPONSE_MB must be at least 1, got {self.max_response_mb}")
        if self.max_empty_pages < 1:
            raise ConfigError(f"CES_MAX_EMPTY_PAGES must be at least 1, got {self.max_empty_pages}")
        if min(self.timeout_seconds, self.connect_timeout_seconds, self.request_deadline_seconds) <= 0:
            raise ConfigError(
                "CES_TIMEOUT_SECONDS, CES_CONNECT_TIMEOUT_SECONDS and CES_REQUEST_DEADLINE_SECONDS "
                "must be positive"
            )
        if self.max_attempts < 1:
            raise ConfigError(f"CES_MAX_ATTEMPTS must be at least 1, got {self.max_attempts}")
        if min(self.retry_max_seconds, self.retry_backoff_seconds, self.quota_retry_seconds) < 0:
            raise ConfigError(
                "CES_RETRY_MAX_SECONDS, CES_RETRY_BACKOFF_SECONDS and CES_QUOTA_RETRY_SECONDS "
                "must not be negative"
            )


DEFAULT_WRITE_MEMORY_LIMIT = "64MB"
"""DuckDB's buffer pool for the connections that load (`CES_WAREHOUSE_MEMORY_LIMIT`; DuckDB's
own default is 80% of RAM): a load's deletes and commit read and rewrite row groups of every
table, and DuckDB keeps what it read cached up to its limit, so a load's memory would grow
with the warehouse. Read-only connections keep DuckDB's default: quantiles hold their groups
in memory, and at this limit the latency queries over a large warehouse fail."""

SIZE_PATTERN = re.compile(r"\d+(?:\.\d+)?\s*(?:[KMGT]i?B|B|%)", re.IGNORECASE)
"""What DuckDB takes as a memory limit: a size, or a share of the machine's RAM."""


@dataclass(frozen=True)
class StorageSettings:
    """Where the lake, the warehouse and the dashboard live, and how loads use the warehouse."""

    lake: str = "data/lake"
    warehouse: str = "data/warehouse.duckdb"
    report: str | None = None
    """Where the dashboard is written; None: `report.html` beside the warehouse."""
    lock_timeout_seconds: float = 900.0
    """How long a load waits for another to release the warehouse."""
    write_memory_limit: str = DEFAULT_WRITE_MEMORY_LIMIT
    """DuckDB's buffer pool for the connections that load (a size, or a share of RAM)."""

    def __post_init__(self) -> None:
        if not SIZE_PATTERN.fullmatch(self.write_memory_limit.strip()):
            raise ConfigError(
                "CES_WAREHOUSE_MEMORY_LIMIT must be a size such as 128MB or 1GB, or a share of RAM "
                f"such as 10%, got {self.write_memory_limit!r}"
            )
        if self.lock_timeout_seconds < 0:
            raise ConfigError("CES_WAREHOUSE_LOCK_TIMEOUT must not be negative")

    @property
    def report_path(self) -> str:
        return self.report or str(Path(self.warehouse).parent / "report.html")


DEFAULT_START_DATE = date(2024, 1, 1)
"""The first daily partition: no CES app holds a conversation from before 2024."""


CRON_PATTERN = re.compile(r"@(?:hourly|daily|weekly|monthly)|[\w*/,?#-]+(?:\s+[\w*/,?#-]+){4}")
"""A cron schedule as Dagster takes it: five fields, or one of its @ shortcuts."""


@dataclass(frozen=True)
class OrchestrationSettings:
    """How Dagster partitions, groups, schedules and checks the loads."""

    start_date: date = DEFAULT_START_DATE
    days_per_run: int = 31
    """Daily partitions of one app a run covers at most (the assets' backfill policy): the
    run's overhead is paid once per range, not once per day."""
    api_concurrency: int = 4
    """Slots of the `ces_api` pool: steps calling CES at once, across every run."""
    lookback_days: int = 2
    conversations_cron: str = "5 * * * *"
    evaluations_cron: str = "30 4 * * *"
    freshness_hours: float = 48.0

    def __post_init__(self) -> None:
        for name, value in (
            ("CES_DAYS_PER_RUN", self.days_per_run),
            ("CES_API_CONCURRENCY", self.api_concurrency),
        ):
            if value < 1:
                raise ConfigError(f"{name} must be at least 1, got {value}")
        if self.lookback_days < 0:
            raise ConfigError(f"CES_LOOKBACK_DAYS must not be negative, got {self.lookback_days}")
        if self.freshness_hours <= 0:
            raise ConfigError(f"CES_FRESHNESS_HOURS must be positive, got {self.freshness_hours}")
        for name, cron in (
            ("CES_CONVERSATIONS_CRON", self.conversations_cron),
            ("CES_EVALUATIONS_CRON", self.evaluations_cron),
        ):
            if not CRON_PATTERN.fullmatch(cron.strip()):
                raise ConfigError(
                    f"{name} must be a cron schedule of five fields such as '5 * * * *', got {cron!r}"
                )


@dataclass(frozen=True)
class Settings:
    """Every setting of ces-pipeline, read once from the environment (`Settings.from_env`)."""

    ces: CesSettings = field(default_factory=CesSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    orchestration: OrchestrationSettings = field(default_factory=OrchestrationSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the `CES_*` variables (and `DAGSTER_HOME`); `env` defaults to `os.environ`."""
        env = os.environ if env is None else env
        return cls(
            ces=ces_settings_from_env(env),
            storage=StorageSettings(
                lake=env.get("CES_LAKE") or "data/lake",
                warehouse=env.get("CES_WAREHOUSE") or "data/warehouse.duckdb",
                report=env.get("CES_REPORT") or None,
                lock_timeout_seconds=env_number(env, "CES_WAREHOUSE_LOCK_TIMEOUT", 900.0),
                write_memory_limit=(
                    env.get("CES_WAREHOUSE_MEMORY_LIMIT") or DEFAULT_WRITE_MEMORY_LIMIT
                ).strip(),
            ),
            orchestration=OrchestrationSettings(
                start_date=env_date(env, "CES_START_DATE", DEFAULT_START_DATE),
                days_per_run=env_integer(env, "CES_DAYS_PER_RUN", 31),
                api_concurrency=env_integer(env, "CES_API_CONCURRENCY", 4),
                lookback_days=env_integer(env, "CES_LOOKBACK_DAYS", 2),
                conversations_cron=env.get("CES_CONVERSATIONS_CRON") or "5 * * * *",
                evaluations_cron=env.get("CES_EVALUATIONS_CRON") or "30 4 * * *",
                freshness_hours=env_number(env, "CES_FRESHNESS_HOURS", 48.0),
            ),
        )


def env_number(env: Mapping[str, str], name: str, default: float) -> float:
    """A finite number: `nan` or `inf` would silently turn a limit off."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {raw!r}")
    return value


def env_integer(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None


def env_date(env: Mapping[str, str], name: str, default: date) -> date:
    raw = env.get(name)
    if not raw:
        return default
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a date YYYY-MM-DD, got {raw!r}") from None


def ces_settings_from_env(env: Mapping[str, str]) -> CesSettings:
    """The `CES_*` variables of the CES connection."""
    sources = tuple(s.upper() for s in _split_csv(env.get("CES_SOURCES")))
    return CesSettings(
        mcp_url=env.get("CES_MCP_URL") or DEFAULT_MCP_URL,
        apps=_split_csv(env.get("CES_APPS")),
        sources=sources,
        access_token=env.get("CES_ACCESS_TOKEN") or None,
        quota_project=env.get("CES_QUOTA_PROJECT") or None,
        max_rps=env_number(env, "CES_MAX_RPS", DEFAULT_MAX_RPS),
        timeout_seconds=env_number(env, "CES_TIMEOUT_SECONDS", 60.0),
        connect_timeout_seconds=env_number(env, "CES_CONNECT_TIMEOUT_SECONDS", 10.0),
        request_deadline_seconds=env_number(env, "CES_REQUEST_DEADLINE_SECONDS", 300.0),
        page_size=env_integer(env, "CES_PAGE_SIZE", 100),
        max_empty_pages=env_integer(env, "CES_MAX_EMPTY_PAGES", 20),
        hydrate=(env.get("CES_HYDRATE") or "auto").strip().lower(),
        max_response_mb=env_integer(env, "CES_MAX_RESPONSE_MB", 64),
        evaluation_runs=_split_csv(env.get("CES_EVALUATION_RUNS")),
        rate_limit_file=default_rate_limit_file(env),
        max_attempts=env_integer(env, "CES_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS),
        retry_max_seconds=env_number(env, "CES_RETRY_MAX_SECONDS", DEFAULT_RETRY_MAX_SECONDS),
        retry_backoff_seconds=env_number(env, "CES_RETRY_BACKOFF_SECONDS", DEFAULT_RETRY_BACKOFF_SECONDS),
        quota_retry_seconds=env_number(env, "CES_QUOTA_RETRY_SECONDS", 90.0),
    )


def default_rate_limit_file(env: Mapping[str, str]) -> str | None:
    """`CES_RATE_LIMIT_FILE`, else a file in `DAGSTER_HOME` so every run of the instance shares it."""
    if env.get("CES_RATE_LIMIT_FILE"):
        return env["CES_RATE_LIMIT_FILE"]
    home = env.get("DAGSTER_HOME")
    return os.path.join(home, "ces-rate-limit.state") if home else None


def load_dotenv_file() -> None:
    """Load `.env` from the working directory without overriding the real environment."""
    from dotenv import load_dotenv

    load_dotenv(override=False)
