"""Dagster resources: the CES connection, the lake and the warehouse, built from `Settings`."""

from __future__ import annotations

import dataclasses
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
    max_empty_pages: int
    max_response_mb: int
    hydrate: str
    timeout_seconds: float
    connect_timeout_seconds: float
    request_deadline_seconds: float
    evaluation_runs: list[str]
    rate_limit_file: str | None = None
    max_attempts: int
    retry_max_seconds: float
    retry_backoff_seconds: float
    quota_retry_seconds: float

    @classmethod
    def from_settings(cls, settings: CesSettings) -> CesResource:
        """The resource for these settings. A token is referenced as `EnvVar("CES_ACCESS_TOKEN")`,
        read when a run starts, so that its value never reaches run config or event storage."""
        values = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
        values = {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}
        values["access_token"] = dg.EnvVar("CES_ACCESS_TOKEN") if settings.access_token else None
        return cls(**values)

    def settings(self) -> CesSettings:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(CesSettings)}
        return CesSettings(
            **{
                name: tuple(v) if isinstance(v, list) else (v if v != "" else None)
                for name, v in values.items()
            }
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
        return Warehouse(self.path, self.lock_timeout_seconds, self.write_memory_limit)


def resources_from_settings(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    return {
        "ces": CesResource.from_settings(settings.ces),
        "lake": LakeResource(root=settings.storage.lake),
        "warehouse": WarehouseResource.from_settings(settings.storage),
    }
