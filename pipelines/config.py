"""Settings read from the environment (and a `.env` file), in one place.

Every knob a user sets lives here with its documented default, so the CLI, the Dagster
resources and the tests agree on names and meanings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_MCP_URL = "https://ces.googleapis.com/mcp"
DEFAULT_MAX_RPS = 10.0
"""The documented CES read quota is 600 requests per minute per project."""

DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_RETRY_MAX_SECONDS = 120.0
DEFAULT_RETRY_BACKOFF_SECONDS = 0.5

APP_NAME_PATTERN = re.compile(r"^projects/[^/]+/locations/[^/]+/apps/[^/]+$")
EVALUATION_RUN_NAME_PATTERN = re.compile(r"^projects/[^/]+/locations/[^/]+/apps/[^/]+/evaluationRuns/[^/]+$")
KNOWN_SOURCES = ("LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL")


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
    page_size: int = 100
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

    def __post_init__(self) -> None:
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
        if self.timeout_seconds <= 0 or self.connect_timeout_seconds <= 0:
            raise ConfigError("CES_TIMEOUT_SECONDS and CES_CONNECT_TIMEOUT_SECONDS must be positive")
        if self.max_attempts < 1:
            raise ConfigError(f"CES_MAX_ATTEMPTS must be at least 1, got {self.max_attempts}")
        if self.retry_max_seconds < 0 or self.retry_backoff_seconds < 0:
            raise ConfigError("CES_RETRY_MAX_SECONDS and CES_RETRY_BACKOFF_SECONDS must not be negative")


@dataclass(frozen=True)
class StorageSettings:
    """Where the lake and the warehouse live."""

    lake: str = "data/lake"
    warehouse: str = "data/warehouse.duckdb"


def env_number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None


def ces_settings_from_env(env: Mapping[str, str] | None = None) -> CesSettings:
    """Read `CES_*` variables; `env` defaults to `os.environ` (after loading `.env`)."""
    env = os.environ if env is None else env
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
        page_size=int(env_number(env, "CES_PAGE_SIZE", 100)),
        evaluation_runs=_split_csv(env.get("CES_EVALUATION_RUNS")),
        rate_limit_file=default_rate_limit_file(env),
        max_attempts=int(env_number(env, "CES_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS)),
        retry_max_seconds=env_number(env, "CES_RETRY_MAX_SECONDS", DEFAULT_RETRY_MAX_SECONDS),
        retry_backoff_seconds=env_number(env, "CES_RETRY_BACKOFF_SECONDS", DEFAULT_RETRY_BACKOFF_SECONDS),
    )


def default_rate_limit_file(env: Mapping[str, str]) -> str | None:
    """`CES_RATE_LIMIT_FILE`, else a file in `DAGSTER_HOME` so every run of the instance shares it."""
    if env.get("CES_RATE_LIMIT_FILE"):
        return env["CES_RATE_LIMIT_FILE"]
    home = env.get("DAGSTER_HOME")
    return os.path.join(home, "ces-rate-limit.state") if home else None


def storage_settings_from_env(env: Mapping[str, str] | None = None) -> StorageSettings:
    env = os.environ if env is None else env
    return StorageSettings(
        lake=env.get("CES_LAKE") or "data/lake",
        warehouse=env.get("CES_WAREHOUSE") or "data/warehouse.duckdb",
    )


def load_dotenv_file() -> None:
    """Load `.env` from the working directory without overriding the real environment."""
    from dotenv import load_dotenv

    load_dotenv(override=False)
