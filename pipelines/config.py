"""Settings, in one place: every knob with its `CES_*` variable and default, in four groups
declared with pydantic-settings (docs/configuration.md says what each is for). `Settings.from_env()`
reads them once, from the environment and a `.env` file, never at import; a bad value is a
`ConfigError`, one line naming its variable."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    NoDecode,
    SettingsConfigDict,
)

from pipelines import resource_names

DEFAULT_MCP_URL = "https://ces.googleapis.com/mcp"
DEFAULT_MAX_RPS = 10.0
DEFAULT_ANOMALY_Z = 3.5
"""The documented CES read quota is 600 requests per minute per project."""

KNOWN_SOURCES = ("LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL")

Location = Annotated[str, AfterValidator(os.path.expanduser)]
"""A file or folder as a shell reads it: a leading `~` is a home folder (DuckDB reads it so, and a
folder named `~` would otherwise be made in the working directory). URLs stay as they are."""


def default_write_memory_limit(ram_bytes: int | None = None) -> str:
    """DuckDB's buffer pool for the connections that load: a 32nd of the RAM, 128 MB to 1 GB. A load's
    need is that of its work (its partitions, at most 32 rolled up at a time), not of the warehouse;
    DuckDB's default, 80% of RAM, would let its cache grow with the machine."""
    if ram_bytes is None:
        ram_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    megabytes = min(1024, max(128, ram_bytes // 32 // 2**20))
    return f"{megabytes}MB"


DEFAULT_WRITE_MEMORY_LIMIT = default_write_memory_limit()


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names the variable."""


URL = r"^(?i:https?)://[^\s/?#]+"
SIZE = r"^(?i:\d+(?:\.\d+)?\s*(?:[KMGT]i?B|B))$"  # as DuckDB takes a memory limit
CRON = r"^(?:@(?:hourly|daily|weekly|monthly)|[\w*/,?#-]+(?:\s+[\w*/,?#-]+){4})$"  # as Dagster takes it
APP = f"^{resource_names.APP.pattern}$"
RUN = f"^{resource_names.EVALUATION_RUN.pattern}$"


def _list(text: Any) -> Any:
    return [item.strip() for item in text.split(",") if item.strip()] if isinstance(text, str) else text


def _texts(pattern: str | None = None) -> Any:
    """A comma-separated list in its variable (never JSON), each item matching `pattern`."""
    return Annotated[tuple[Annotated[str, Field(pattern=pattern)], ...], NoDecode, BeforeValidator(_list)]


Apps, EvaluationRuns, Names = _texts(APP), _texts(RUN), _texts()


_EXPECTED = {
    "int_parsing": "a whole number",
    "float_parsing": "a number",
    "finite_number": "a finite number",  # `nan` or `inf` would silently turn a limit off
    "bool_parsing": "true or false",
    URL: f"an http(s) URL such as {DEFAULT_MCP_URL}",
    SIZE: "a size such as 128MB or 1GB",
    CRON: "a cron schedule of five fields such as '5 * * * *'",
    APP: "an app resource name (projects/{project}/locations/{location}/apps/{app})",
    RUN: "an evaluation run resource name (projects/{project}/locations/{location}/apps/{app}"
    "/evaluationRuns/{run})",
}
"""What a value must be, by pydantic's error type or the pattern it does not match."""


def _message(variable: str, error: ErrorDetails) -> str:
    kind, got, context = error["type"], error["input"], error.get("ctx", {})
    if kind == "value_error":  # a validator's own words
        return f"{variable} {context['error']}"
    if kind in ("greater_than", "greater_than_equal"):  # every bound that excludes itself is 0
        least = context.get("ge")
        says = "be positive" if least is None else "not be negative" if least == 0 else f"be at least {least}"
        return f"{variable} must {says}, got {got}"
    expected = _EXPECTED.get(context.get("pattern", kind), error["msg"])
    if kind.startswith("date"):
        expected = "a date YYYY-MM-DD"
    elif kind == "literal_error":
        expected = context["expected"].replace("'", "")
    if len(error["loc"]) > 1:  # one item of a list
        return f"{variable}: {got!r} is not {expected}"
    return f"{variable} must be {expected}, got {got!r}"


class _Group(BaseSettings):
    """Settings read from `CES_` and each field's name, or its alias. A group is a value: built from
    arguments (`CesSettings(page_size=50)`, a Dagster resource's config) it holds those and the
    defaults, whatever the environment says; `read` brings in the environment and `.env`."""

    model_config = SettingsConfigDict(
        env_prefix="CES_",
        env_file=".env",
        extra="ignore",
        frozen=True,
        populate_by_name=True,
        allow_inf_nan=False,
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = str(error["loc"][0])
            raise ConfigError(_message(self.variables().get(name, name), error)) from None

    @classmethod
    def settings_customise_sources(cls, settings_cls: type, init_settings: Any, **_: Any) -> tuple:
        return (init_settings,)

    @classmethod
    def variables(cls) -> dict[str, str]:
        prefix, fields = cls.model_config["env_prefix"], cls.model_fields
        return {name: str(fields[name].validation_alias or prefix + name.upper()) for name in fields}

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None) -> Self:
        """The group from the environment over `.env` (pydantic-settings' sources), or from `env` alone."""
        if env is None:
            return cls(**{**DotEnvSettingsSource(cls)(), **EnvSettingsSource(cls)()})
        return cls(**{name: env[variable] for name, variable in cls.variables().items() if variable in env})

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, values: Any) -> Any:
        """Text is read stripped (a secret mounted from a file ends in a newline); blank is unset."""
        if not isinstance(values, dict):
            return values
        values = {key: text.strip() if isinstance(text, str) else text for key, text in values.items()}
        return {key: value for key, value in values.items() if value != ""}


class CesSettings(_Group):
    """How to reach the CES MCP server. `access_token` is a secret: never log or store it."""

    mcp_url: Annotated[str, Field(pattern=URL)] = DEFAULT_MCP_URL
    apps: Apps = ()
    sources: Names = ()
    access_token: str | None = Field(None, repr=False)
    quota_project: str | None = None
    max_rps: float = Field(DEFAULT_MAX_RPS, gt=0)
    timeout_seconds: float = Field(60.0, gt=0)
    connect_timeout_seconds: float = Field(10.0, gt=0)
    request_deadline_seconds: float = Field(300.0, gt=0)
    page_size: int = Field(100, gt=0)
    max_response_mb: int = Field(64, ge=1)
    max_empty_pages: int = Field(20, ge=1)
    hydrate: Annotated[Literal["auto", "always", "never"], BeforeValidator(str.lower)] = "auto"
    evaluation_runs: EvaluationRuns = ()
    rate_limit_file: Location | None = None
    rate_limit_postgres: str | None = Field(None, repr=False)
    max_attempts: int = Field(5, ge=1)
    retry_max_seconds: float = Field(120.0, ge=0)
    retry_backoff_seconds: float = Field(0.5, ge=0)
    quota_retry_seconds: float = Field(90.0, ge=0)

    @field_validator("sources")
    @classmethod
    def _known_sources(cls, sources: tuple[str, ...]) -> tuple[str, ...]:
        sources = tuple(source.upper() for source in sources)
        if unknown := [source for source in sources if source not in KNOWN_SOURCES]:
            raise ValueError(f"has an unknown source {', '.join(unknown)}; known: {', '.join(KNOWN_SOURCES)}")
        return sources

    @field_validator("evaluation_runs")
    @classmethod
    def _runs_of_the_apps(cls, runs: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        """A run of an app outside CES_APPS would never be fetched: said, not skipped unsaid."""
        apps = info.data.get("apps") or ()
        of_app = resource_names.EVALUATION_RUN.fullmatch
        if stray := [run for run in runs if apps and of_app(run)[1] not in apps]:
            raise ValueError(f"names runs of apps not in CES_APPS, never fetched: {', '.join(stray)}")
        return runs


class StorageSettings(_Group):
    """Where the lake, the warehouse and the dashboard live, and how loads use the warehouse."""

    lake: Location = "data/lake"
    warehouse: Location = "data/warehouse.duckdb"
    warehouse_data_path: Location | None = None
    report: Location | None = None
    lock_timeout_seconds: float = Field(900.0, ge=0, validation_alias="CES_WAREHOUSE_LOCK_TIMEOUT")
    write_memory_limit: Annotated[str, Field(pattern=SIZE)] = Field(
        DEFAULT_WRITE_MEMORY_LIMIT, validation_alias="CES_WAREHOUSE_MEMORY_LIMIT"
    )
    write_threads: int = Field(1, ge=1, validation_alias="CES_WAREHOUSE_THREADS")
    model_prices: Location | None = None
    """A CSV file of model prices for the cost views; unset: the bundled list prices."""
    anomaly_z: float = Field(DEFAULT_ANOMALY_Z, gt=0)
    """The robust z-score beyond which metric_anomalies flags a day."""

    @property
    def warehouse_data_root(self) -> str:
        return self.warehouse_data_path or f"{self.lake.rstrip('/')}/warehouse/"

    @property
    def report_path(self) -> str:
        """`report.html` beside the warehouse file (a DuckLake: beside a local lake) unless set."""
        if self.report:
            return self.report
        if not self.warehouse.startswith("ducklake:"):
            return str(Path(self.warehouse).parent / "report.html")
        return str(Path(self.lake).parent / "report.html") if "://" not in self.lake else "report.html"


class OrchestrationSettings(_Group):
    start_date: date = date(2024, 1, 1)
    days_per_run: int = Field(31, ge=1)
    api_concurrency: int = Field(4, ge=1)
    lookback_days: int = Field(2, ge=0)
    conversations_cron: Annotated[str, Field(pattern=CRON)] = "5 * * * *"
    evaluations_cron: Annotated[str, Field(pattern=CRON)] = "30 4 * * *"
    freshness_hours: float = Field(48.0, gt=0)
    regression_pass_rate_points: float = Field(5.0, ge=0)
    regression_score_pct: float = Field(10.0, ge=0)
    regression_latency_pct: float = Field(20.0, ge=0)
    regression_severity: Literal["warn", "error"] = "warn"
    dagster_home: Location = Field("dagster_home", validation_alias="DAGSTER_HOME")
    """The Dagster instance's folder (its `dagster.yaml`), relative to the working directory."""
    queue_runs: bool = False
    run_retention_days: int = Field(30, ge=0)
    """How long Dagster keeps a finished run's records once later runs redid its work."""


class ServeSettings(_Group):
    """Caps on what `ces-pipeline mcp` answers: an agent's question never costs the warehouse more."""

    model_config = SettingsConfigDict(env_prefix="CES_SERVE_")

    max_rows: int = Field(500, ge=1)
    max_bytes: int = Field(262_144, ge=1)
    timeout_seconds: float = Field(30.0, gt=0)


@dataclass(frozen=True)
class Settings:
    """The whole configuration: read once where a command starts or Dagster loads the
    definitions, then passed on as a value."""

    ces: CesSettings = field(default_factory=CesSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    orchestration: OrchestrationSettings = field(default_factory=OrchestrationSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Every group from the environment over `.env`, or from `env` alone; unless set, the rate
        limit's file is in `DAGSTER_HOME`, when that is set."""
        ces, orchestration = CesSettings.read(env), OrchestrationSettings.read(env)
        if ces.rate_limit_file is None and "dagster_home" in orchestration.model_fields_set:
            state = os.path.join(orchestration.dagster_home, "ces-rate-limit.state")
            ces = ces.model_copy(update={"rate_limit_file": state})
        return cls(ces, StorageSettings.read(env), orchestration, ServeSettings.read(env))

    def environment(self) -> dict[str, str]:
        """The environment of a process started from this one (`dagster dev`) that is to read the
        same settings: this process's, with every setting it was given written over it as its variable."""
        env = dict(os.environ)
        for group in (self.ces, self.storage, self.orchestration, self.serve):
            for name, variable in group.variables().items():
                # a default stays unwritten: the child derives it as this process did
                if name in group.model_fields_set and (value := getattr(group, name)) is not None:
                    env[variable] = ",".join(value) if isinstance(value, tuple) else str(value)
        return env


def unknown_variables(env: Mapping[str, str] | None = None) -> list[str]:
    """A line for each `CES_*` variable no setting reads (a typo, or a name this version does not
    know), with the setting it most resembles: left unsaid, a misspelt setting silently keeps its
    default."""
    groups = (CesSettings, StorageSettings, OrchestrationSettings, ServeSettings)
    known = [variable for group in groups for variable in group.variables().values()]
    found = []
    for name in sorted(os.environ if env is None else env):
        if name.startswith("CES_") and name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            meant = f": did you mean {close[0]}?" if close else " (docs/configuration.md lists them)"
            found.append(f"{name} is not a setting{meant}")
    return found


def s3_endpoint_url() -> str | None:
    """`AWS_ENDPOINT_URL`, an S3-compatible server (boto3 and s3fs read it too): DuckDB's httpfs reads
    the other `AWS_*` variables, the credentials and the region, itself, but not this one."""
    return os.environ.get("AWS_ENDPOINT_URL") or None


def load_dotenv_file() -> None:
    """Load `.env` into this process's environment, never over it, as Dagster does for its own: the
    variables that libraries read there (`AWS_*`, `DAGSTER_HOME`, Google's credentials) and the
    `EnvVar` references of Dagster resources are found in the environment alone."""
    from dotenv import load_dotenv

    load_dotenv(".env", override=False)


LIBPQ_KEEPALIVES = {
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "tcp_user_timeout": 60_000,
}
"""TCP keepalives, and a bound on data left unacknowledged (ms), for the connections to PostgreSQL
(a DuckLake's catalog, the shared request budget) whose conninfo sets none (`keepalives_set`): a
server whose host goes down (a failover, a crash) while a query waits for its answer fails that
query within about a minute, where the connection, with nothing to send or its query
unacknowledged, would wait for ever or for a quarter of an hour."""


def keepalives_set(conninfo: str) -> bool:
    return any(key in conninfo for key in ("keepalives", "tcp_user_timeout"))


def libpq_connect_timeout_set() -> bool:
    """Whether `PGCONNECT_TIMEOUT` bounds libpq's connects (the PostgreSQL catalog's `psql` and
    DuckDB's postgres extension read it themselves)."""
    return bool(os.environ.get("PGCONNECT_TIMEOUT"))
