"""Dagster resources: the CES client settings, the lake and the warehouse, configured from env."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from pipelines.ces.client import CesMcpClient
from pipelines.config import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_RPS,
    DEFAULT_MCP_URL,
    DEFAULT_RETRY_BACKOFF_SECONDS,
    DEFAULT_RETRY_MAX_SECONDS,
    CesSettings,
    default_rate_limit_file,
    env_number,
)
from pipelines.lake.store import Lake
from pipelines.warehouse.duck import Warehouse


class CesResource(dg.ConfigurableResource):
    """How to reach CES. Every field maps to the `CES_*` variable of the same meaning."""

    mcp_url: str = DEFAULT_MCP_URL
    apps: str = ""
    sources: str = ""
    access_token: str | None = None
    quota_project: str | None = None
    max_rps: float = DEFAULT_MAX_RPS
    page_size: int = 100
    timeout_seconds: float = 60.0
    connect_timeout_seconds: float = 10.0
    evaluation_runs: str = ""
    rate_limit_file: str | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    retry_max_seconds: float = DEFAULT_RETRY_MAX_SECONDS
    retry_backoff_seconds: float = DEFAULT_RETRY_BACKOFF_SECONDS

    def settings(self) -> CesSettings:
        return CesSettings(
            mcp_url=self.mcp_url,
            apps=_csv(self.apps),
            sources=tuple(s.upper() for s in _csv(self.sources)),
            access_token=self.access_token or None,
            quota_project=self.quota_project or None,
            max_rps=self.max_rps,
            page_size=self.page_size,
            timeout_seconds=self.timeout_seconds,
            connect_timeout_seconds=self.connect_timeout_seconds,
            evaluation_runs=_csv(self.evaluation_runs),
            rate_limit_file=self.rate_limit_file or default_rate_limit_file(os.environ),
            max_attempts=self.max_attempts,
            retry_max_seconds=self.retry_max_seconds,
            retry_backoff_seconds=self.retry_backoff_seconds,
        )

    @contextmanager
    def client(self) -> Iterator[CesMcpClient]:
        with CesMcpClient(self.settings()) as client:
            yield client


class LakeResource(dg.ConfigurableResource):
    """The lake root (`CES_LAKE`): a local path or an fsspec URL such as `gs://bucket/lake`."""

    root: str = "data/lake"

    def lake(self) -> Lake:
        return Lake(self.root)


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse file (`CES_WAREHOUSE`)."""

    path: str = "data/warehouse.duckdb"

    def warehouse(self) -> Warehouse:
        return Warehouse(self.path)


def _csv(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _from_env(name: str, default: str | None) -> str | dg.EnvVar | None:
    """`EnvVar(name)` when the variable is set, so its value (a token, say) is read at run
    time and never written into run config or event storage; else the documented default."""
    return dg.EnvVar(name) if os.environ.get(name) else default


def resources_from_env() -> dict[str, dg.ConfigurableResource]:
    """The resources configured by the `CES_*` environment variables."""
    return {
        "ces": CesResource(
            mcp_url=_from_env("CES_MCP_URL", DEFAULT_MCP_URL),
            apps=_from_env("CES_APPS", ""),
            sources=_from_env("CES_SOURCES", ""),
            access_token=_from_env("CES_ACCESS_TOKEN", None),
            quota_project=_from_env("CES_QUOTA_PROJECT", None),
            evaluation_runs=_from_env("CES_EVALUATION_RUNS", ""),
            max_rps=env_number(os.environ, "CES_MAX_RPS", DEFAULT_MAX_RPS),
            page_size=int(env_number(os.environ, "CES_PAGE_SIZE", 100)),
            timeout_seconds=env_number(os.environ, "CES_TIMEOUT_SECONDS", 60.0),
            connect_timeout_seconds=env_number(os.environ, "CES_CONNECT_TIMEOUT_SECONDS", 10.0),
            max_attempts=int(env_number(os.environ, "CES_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS)),
            retry_max_seconds=env_number(os.environ, "CES_RETRY_MAX_SECONDS", DEFAULT_RETRY_MAX_SECONDS),
            retry_backoff_seconds=env_number(
                os.environ, "CES_RETRY_BACKOFF_SECONDS", DEFAULT_RETRY_BACKOFF_SECONDS
            ),
        ),
        "lake": LakeResource(root=_from_env("CES_LAKE", "data/lake")),
        "warehouse": WarehouseResource(path=_from_env("CES_WAREHOUSE", "data/warehouse.duckdb")),
    }
