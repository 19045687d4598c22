"""Settings read from the environment (and a `.env` file), in one place: every knob with its
`CES_*` variable and default, read by `Settings.from_env()` (never at import); a bad value is a
`ConfigError` naming its variable."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pipelines import resource_names

DEFAULT_MCP_URL = "https://ces.googleapis.com/mcp"
DEFAULT_MAX_RPS = 10.0
"""The documented CES read quota is 600 requests per minute per project."""

KNOWN_SOURCES = ("LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL")
HYDRATE_POLICIES = ("auto", "always", "never")


def default_write_memory_limit(ram_bytes: int | None = None) -> str:
    """DuckDB's buffer pool for the connections that load, from the machine's RAM: a 32nd of it,
    at least 128 MB, at most 1 GB. A load reads and writes its own partitions and rolls up at
    most 32 of them at a time, so its need is that of its work, not of the warehouse; DuckDB's
    own default (80% of RAM) would let its cache of what a load read grow with the machine.
    Read-only connections keep DuckDB's default, which large latency quantiles need."""
    if ram_bytes is None:
        ram_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    megabytes = min(1024, max(128, ram_bytes // 32 // 2**20))
    return f"{megabytes}MB"


DEFAULT_WRITE_MEMORY_LIMIT = default_write_memory_limit()

SIZE_PATTERN = re.compile(r"\d+(?:\.\d+)?\s*(?:[KMGT]i?B|B)", re.IGNORECASE)
"""What DuckDB takes as a memory limit: a size, or a share of the machine's RAM."""

DEFAULT_START_DATE = date(2024, 1, 1)
"""The first daily partition: no CES app holds a conversation from before 2024."""

CRON_PATTERN = re.compile(r"@(?:hourly|daily|weekly|monthly)|[\w*/,?#-]+(?:\s+[\w*/,?#-]+){4}")
"""A cron schedule as Dagster takes it: five fields, or one of its @ shortcuts."""

_BOUNDS: dict[str, tuple[Callable[[float], bool], str]] = {
    "positive": (lambda value: value > 0, "must be positive"),
    "at_least_1": (lambda value: value >= 1, "must be at least 1"),
    "not_negative": (lambda value: value >= 0, "must not be negative"),
}


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


def _setting(variable: str, default: Any, bound: str | None = None, **kwargs: Any) -> Any:
    """A field read from `variable`; `bound` (a `_BOUNDS` key) is checked whenever it is set."""
    return field(default=default, metadata={"env": variable, "bound": bound}, **kwargs)


def _check_bounds(settings: Any) -> None:
    for f in dataclasses.fields(settings):
        if f.metadata.get("bound"):
            holds, says = _BOUNDS[f.metadata["bound"]]
            value = getattr(settings, f.name)
            if not holds(value):
                raise ConfigError(f"{f.metadata['env']} {says}, got {value}")


@dataclass(frozen=True)
class CesSettings:
    """How to reach the CES MCP server. `access_token` is a secret: never log or store it."""

    mcp_url: str = _setting("CES_MCP_URL", DEFAULT_MCP_URL)
    apps: tuple[str, ...] = _setting("CES_APPS", ())
    sources: tuple[str, ...] = _setting("CES_SOURCES", ())
    access_token: str | None = _setting("CES_ACCESS_TOKEN", None, repr=False)
    quota_project: str | None = _setting("CES_QUOTA_PROJECT", None)
    max_rps: float = _setting("CES_MAX_RPS", DEFAULT_MAX_RPS, "positive")
    timeout_seconds: float = _setting("CES_TIMEOUT_SECONDS", 60.0, "positive")
    """Read timeout: the longest silence tolerated while waiting for (or streaming) a response."""
    connect_timeout_seconds: float = _setting("CES_CONNECT_TIMEOUT_SECONDS", 10.0, "positive")
    request_deadline_seconds: float = _setting("CES_REQUEST_DEADLINE_SECONDS", 300.0, "positive")
    """The longest one exchange may take in all, however steadily the server sends."""
    page_size: int = _setting("CES_PAGE_SIZE", 100, "positive")
    max_response_mb: int = _setting("CES_MAX_RESPONSE_MB", 64, "at_least_1")
    """The largest response body (or SSE event) read; a larger one is an error, not gigabytes of memory."""
    max_empty_pages: int = _setting("CES_MAX_EMPTY_PAGES", 20, "at_least_1")
    """Empty pages in a row, each with a next page token, before a listing is given up."""
    hydrate: str = _setting("CES_HYDRATE", "auto")
    """Which listed conversations are fetched in full: `auto` (those without traces), `always`, `never`."""
    evaluation_runs: tuple[str, ...] = _setting("CES_EVALUATION_RUNS", ())
    """Evaluation runs always fetched, besides those `list_evaluation_runs` finds."""
    rate_limit_file: str | None = _setting("CES_RATE_LIMIT_FILE", None)
    """Where processes share the request rate; unset, a file in `DAGSTER_HOME` if set, else none."""
    rate_limit_postgres: str | None = _setting("CES_RATE_LIMIT_POSTGRES", None, repr=False)
    """A PostgreSQL connection string through which processes on every host share the request rate."""
    max_attempts: int = _setting("CES_MAX_ATTEMPTS", 5, "at_least_1")
    """Attempts per request, the first included, for calls that may be sent again (1: no retry)."""
    retry_max_seconds: float = _setting("CES_RETRY_MAX_SECONDS", 120.0, "not_negative")
    """No retry of a request starts later than this after its first attempt."""
    retry_backoff_seconds: float = _setting("CES_RETRY_BACKOFF_SECONDS", 0.5, "not_negative")
    """First backoff ceiling; it doubles per attempt (full jitter, at most 30 s)."""
    quota_retry_seconds: float = _setting("CES_QUOTA_RETRY_SECONDS", 90.0, "not_negative")
    """A quota refusal (HTTP 429, RESOURCE_EXHAUSTED) is retried until this long after the first attempt."""

    def __post_init__(self) -> None:
        if self.access_token is not None:  # a secret mounted from a file ends in a newline
            object.__setattr__(self, "access_token", self.access_token.strip() or None)
        object.__setattr__(self, "sources", tuple(source.upper() for source in self.sources))
        object.__setattr__(self, "hydrate", self.hydrate.strip().lower())
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
            if not resource_names.APP.fullmatch(app):
                raise ConfigError(
                    f"CES_APPS: {app!r} is not an app resource name "
                    "(projects/{project}/locations/{location}/apps/{app})"
                )
        for run in self.evaluation_runs:
            if not resource_names.EVALUATION_RUN.fullmatch(run):
                raise ConfigError(
                    f"CES_EVALUATION_RUNS: {run!r} is not an evaluation run resource name "
                    "(projects/{project}/locations/{location}/apps/{app}/evaluationRuns/{run})"
                )
        if self.hydrate not in HYDRATE_POLICIES:
            raise ConfigError(f"CES_HYDRATE must be auto, always or never, got {self.hydrate!r}")
        _check_bounds(self)


@dataclass(frozen=True)
class StorageSettings:
    """Where the lake, the warehouse and the dashboard live, and how loads use the warehouse."""

    lake: str = _setting("CES_LAKE", "data/lake")
    warehouse: str = _setting("CES_WAREHOUSE", "data/warehouse.duckdb")
    warehouse_data_path: str | None = _setting("CES_WAREHOUSE_DATA_PATH", None)
    """Where a DuckLake warehouse keeps its data files; None: `warehouse/` under the lake."""
    report: str | None = _setting("CES_REPORT", None)
    """Where the dashboard is written; None: `report.html` beside the warehouse file (a DuckLake:
    beside the lake, when the lake is local)."""
    lock_timeout_seconds: float = _setting("CES_WAREHOUSE_LOCK_TIMEOUT", 900.0, "not_negative")
    """How long a load waits for another to release the warehouse."""
    write_memory_limit: str = _setting("CES_WAREHOUSE_MEMORY_LIMIT", DEFAULT_WRITE_MEMORY_LIMIT)
    """DuckDB's buffer pool for the connections that load (a size)."""
    write_threads: int = _setting("CES_WAREHOUSE_THREADS", 1, "at_least_1")
    """DuckDB's threads for the connections that load: a load's inserts and deletes are too small to
    repay parallel workers, which cost CPU and memory to coordinate (queries keep DuckDB's own)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "write_memory_limit", self.write_memory_limit.strip())
        if not SIZE_PATTERN.fullmatch(self.write_memory_limit):
            raise ConfigError(
                "CES_WAREHOUSE_MEMORY_LIMIT must be a size such as 128MB or 1GB, "
                f"got {self.write_memory_limit!r}"
            )
        _check_bounds(self)

    @property
    def warehouse_data_root(self) -> str:
        return self.warehouse_data_path or f"{self.lake.rstrip('/')}/warehouse/"

    @property
    def report_path(self) -> str:
        if self.report:
            return self.report
        if not self.warehouse.startswith("ducklake:"):
            return str(Path(self.warehouse).parent / "report.html")
        return str(Path(self.lake).parent / "report.html") if "://" not in self.lake else "report.html"


@dataclass(frozen=True)
class OrchestrationSettings:
    start_date: date = _setting("CES_START_DATE", DEFAULT_START_DATE)
    days_per_run: int = _setting("CES_DAYS_PER_RUN", 31, "at_least_1")
    """Daily partitions of one app a run covers at most: its overhead is paid once per range."""
    api_concurrency: int = _setting("CES_API_CONCURRENCY", 4, "at_least_1")
    """Slots of the `ces_api` pool: steps calling CES at once, across every run."""
    lookback_days: int = _setting("CES_LOOKBACK_DAYS", 2, "not_negative")
    conversations_cron: str = _setting("CES_CONVERSATIONS_CRON", "5 * * * *")
    evaluations_cron: str = _setting("CES_EVALUATIONS_CRON", "30 4 * * *")
    freshness_hours: float = _setting("CES_FRESHNESS_HOURS", 48.0, "positive")
    regression_pass_rate_points: float = _setting("CES_REGRESSION_PASS_RATE_POINTS", 5.0, "not_negative")
    """The evaluation regression gate fails when an evaluation's pass rate drops by more points."""
    regression_score_pct: float = _setting("CES_REGRESSION_SCORE_PCT", 10.0, "not_negative")
    """... or a score metric's mean worsens by more than this percentage ..."""
    regression_latency_pct: float = _setting("CES_REGRESSION_LATENCY_PCT", 20.0, "not_negative")
    """... or the golden turns' p90 latency rises by more than this percentage."""
    regression_severity: str = _setting("CES_REGRESSION_SEVERITY", "warn")
    """`warn` or `error`: the severity of a failed regression gate."""
    dagster_home: str = _setting("DAGSTER_HOME", "dagster_home")
    """The Dagster instance's folder (its `dagster.yaml`), relative to the working directory."""
    queue_runs: bool = _setting("CES_QUEUE_RUNS", False)
    """Whether the CLI queues its runs for the instance's `dagster-daemon` instead of executing
    them itself: asked for, never guessed from a heartbeat (see `orchestration/run_queue.py`)."""

    def __post_init__(self) -> None:
        _check_bounds(self)
        if self.regression_severity not in ("warn", "error"):
            raise ConfigError(
                f"CES_REGRESSION_SEVERITY must be warn or error, got {self.regression_severity!r}"
            )
        for name, cron in (
            ("CES_CONVERSATIONS_CRON", self.conversations_cron),
            ("CES_EVALUATIONS_CRON", self.evaluations_cron),
        ):
            if not CRON_PATTERN.fullmatch(cron.strip()):
                raise ConfigError(
                    f"{name} must be a cron schedule of five fields such as '5 * * * *', got {cron!r}"
                )


@dataclass(frozen=True)
class ServeSettings:
    """Caps on what `ces-pipeline mcp` answers: an agent's question never costs the warehouse more."""

    max_rows: int = _setting("CES_SERVE_MAX_ROWS", 500, "at_least_1")
    """Rows of one answer at most; an answer cut short says so."""
    max_bytes: int = _setting("CES_SERVE_MAX_BYTES", 262_144, "at_least_1")
    """Bytes of one answer's JSON at most (256 KiB: a fair share of an agent's context)."""
    timeout_seconds: float = _setting("CES_SERVE_TIMEOUT_SECONDS", 30.0, "positive")
    """Seconds one tool call may query the warehouse before it is interrupted."""

    def __post_init__(self) -> None:
        _check_bounds(self)


@dataclass(frozen=True)
class Settings:
    ces: CesSettings = field(default_factory=CesSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    orchestration: OrchestrationSettings = field(default_factory=OrchestrationSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the `CES_*` variables (and `DAGSTER_HOME`); `env` defaults to `os.environ`."""
        env = os.environ if env is None else env
        return cls(
            ces=ces_settings_from_env(env),
            storage=_from_env(StorageSettings, env),
            orchestration=_from_env(OrchestrationSettings, env),
            serve=_from_env(ServeSettings, env),
        )


def _number(name: str, raw: str) -> float:
    """A finite number: `nan` or `inf` would silently turn a limit off."""
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {raw!r}")
    return value


def _reader(parse: Callable[[str], Any], expected: str) -> Callable[[str, str], Any]:
    def read(name: str, raw: str) -> Any:
        try:
            return parse(raw)
        except ValueError:
            raise ConfigError(f"{name} must be {expected}, got {raw!r}") from None

    return read


_TRUTH = dict.fromkeys(("1", "true", "yes", "on"), True) | dict.fromkeys(("0", "false", "no", "off"), False)


def _bool(name: str, raw: str) -> bool:
    try:
        return _TRUTH[raw.strip().lower()]
    except KeyError:
        raise ConfigError(f"{name} must be true or false, got {raw!r}") from None


def _csv(_name: str, raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


_READERS: dict[str, Callable[[str, str], Any]] = {
    "float": _number,
    "bool": _bool,
    "int": _reader(int, "a whole number"),
    "date": _reader(date.fromisoformat, "a date YYYY-MM-DD"),
    "tuple[str, ...]": _csv,
    "str": lambda _name, raw: raw,
    "str | None": lambda _name, raw: raw,
}
"""How a variable's text becomes a field's value, by the field's annotation."""

T = TypeVar("T")


def _from_env(cls: type[T], env: Mapping[str, str]) -> T:
    """`cls` with every field whose variable is set (not blank) read from it; the others default."""
    values = {
        f.name: _READERS[str(f.type)](f.metadata["env"], env[f.metadata["env"]])
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if env.get(f.metadata["env"], "").strip()
    }
    return cls(**values)


def ces_settings_from_env(env: Mapping[str, str]) -> CesSettings:
    settings = _from_env(CesSettings, env)
    if settings.rate_limit_file is None and env.get("DAGSTER_HOME"):
        return dataclasses.replace(
            settings, rate_limit_file=os.path.join(env["DAGSTER_HOME"], "ces-rate-limit.state")
        )
    return settings


def load_dotenv_file() -> None:
    """Load `.env` from the working directory without overriding the real environment."""
    from dotenv import load_dotenv

    load_dotenv(override=False)
