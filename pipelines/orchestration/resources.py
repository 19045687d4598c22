"""Dagster resources: the CES connection, the lake and the warehouse, built from `Settings`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from pipelines.ces.client import CesMcpClient
from pipelines.config import CesSettings, Settings, StorageSettings
from pipelines.lake.store import Lake
from pipelines.warehouse.duck import Warehouse


class CesResource(dg.ConfigurableResource):
    """How to reach CES. Every field maps to the `CES_*` variable of the same meaning."""

    mcp_url: str
    apps: list[str]
    sources: list[str]
    access_token: str | None = None
    quota_project: str | None = None
    max_rps: float
    page_size: int
    timeout_seconds: float
    connect_timeout_seconds: float
    evaluation_runs: list[str]
    rate_limit_file: str | None = None
    max_attempts: int
    retry_max_seconds: float
    retry_backoff_seconds: float

    @classmethod
    def from_settings(cls, settings: CesSettings) -> CesResource:
        """The resource for these settings. A token is referenced as `EnvVar("CES_ACCESS_TOKEN")`,
        read when a run starts, so that its value never reaches run config or event storage."""
        return cls(
            mcp_url=settings.mcp_url,
            apps=list(settings.apps),
            sources=list(settings.sources),
            access_token=dg.EnvVar("CES_ACCESS_TOKEN") if settings.access_token else None,
            quota_project=settings.quota_project,
            max_rps=settings.max_rps,
            page_size=settings.page_size,
            timeout_seconds=settings.timeout_seconds,
            connect_timeout_seconds=settings.connect_timeout_seconds,
            evaluation_runs=list(settings.evaluation_runs),
            rate_limit_file=settings.rate_limit_file,
            max_attempts=settings.max_attempts,
            retry_max_seconds=settings.retry_max_seconds,
            retry_backoff_seconds=settings.retry_backoff_seconds,
        )

    def settings(self) -> CesSettings:
        return CesSettings(
            mcp_url=self.mcp_url,
            apps=tuple(self.apps),
            sources=tuple(self.sources),
            access_token=self.access_token or None,
            quota_project=self.quota_project or None,
            max_rps=self.max_rps,
            page_size=self.page_size,
            timeout_seconds=self.timeout_seconds,
            connect_timeout_seconds=self.connect_timeout_seconds,
            evaluation_runs=tuple(self.evaluation_runs),
            rate_limit_file=self.rate_limit_file,
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

    root: str

    def lake(self) -> Lake:
        return Lake(self.root)


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB warehouse file (`CES_WAREHOUSE`), how loads use it, and the dashboard's path."""

    path: str
    lock_timeout_seconds: float
    write_memory_limit: str
    report_path: str

    @classmethod
    def from_settings(cls, storage: StorageSettings) -> WarehouseResource:
        return cls(
            path=storage.warehouse,
            lock_timeout_seconds=storage.lock_timeout_seconds,
            write_memory_limit=storage.write_memory_limit,
            report_path=storage.report_path,
        )

    def warehouse(self) -> Warehouse:
        return Warehouse(
            self.path,
            lock_timeout_seconds=self.lock_timeout_seconds,
            write_memory_limit=self.write_memory_limit,
        )


def resources_from_settings(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    return {
        "ces": CesResource.from_settings(settings.ces),
        "lake": LakeResource(root=settings.storage.lake),
        "warehouse": WarehouseResource.from_settings(settings.storage),
    }
