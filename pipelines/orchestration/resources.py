"""Dagster resources: the CES connection, the lake and the warehouse, built from `Settings`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg

from pipelines import stop
from pipelines.ces.client import CesMcpClient
from pipelines.config import CesSettings, OrchestrationSettings, Settings, StorageSettings
from pipelines.lake.store import Lake
from pipelines.warehouse import ducklake
from pipelines.warehouse.duck import Warehouse


class CesResource(dg.ConfigurableResource):
    """How to reach CES: the values of `CesSettings` as Dagster config, but the token, which is
    `EnvVar("CES_ACCESS_TOKEN")`, read at run start: never in run config or events."""

    values: dict[str, Any]
    access_token: str | None = None

    @classmethod
    def from_settings(cls, settings: CesSettings) -> CesResource:
        token = dg.EnvVar("CES_ACCESS_TOKEN") if settings.access_token else None
        values = settings.model_dump(mode="json", exclude={"access_token"}, exclude_none=True)
        return cls(values=values, access_token=token)

    def settings(self) -> CesSettings:
        return CesSettings(**self.values, access_token=self.access_token)

    def client(self) -> CesMcpClient:
        """A client of these settings, to use as a context manager."""
        return CesMcpClient(self.settings())


class LakeResource(dg.ConfigurableResource):
    """The lake root (`CES_LAKE`): a local path or an fsspec URL such as `gs://bucket/lake`."""

    root: str

    def lake(self) -> Lake:
        return Lake(self.root)


class WarehouseResource(dg.ConfigurableResource):
    """The warehouse (`CES_WAREHOUSE`: a DuckDB file or a DuckLake), how loads use it, and the
    dashboard's path."""

    path: str
    lock_timeout_seconds: float
    write_memory_limit: str
    data_path: str
    write_threads: int
    model_prices: str
    anomaly_z: float
    report_path: str

    @classmethod
    def from_settings(cls, storage: StorageSettings) -> WarehouseResource:
        """A DuckLake target with a password is `EnvVar("CES_WAREHOUSE")`: never in config or the UI."""
        values: dict[str, Any] = dataclasses.asdict(Warehouse.from_settings(storage))
        if ducklake.shown(storage.warehouse) != storage.warehouse:
            values["path"] = dg.EnvVar("CES_WAREHOUSE")
        return cls(**values, report_path=storage.report_path)

    def warehouse(self) -> Warehouse:
        return Warehouse(**{field.name: getattr(self, field.name) for field in dataclasses.fields(Warehouse)})

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator[WarehouseResource]:
        """For the whole run: once Dagster terminates it, its process ends within
        `stop.STOP_GRACE_SECONDS`, even stuck in a call to a catalog that answers nothing."""
        with stop.run_ended_within(stop.STOP_GRACE_SECONDS):
            yield self


class RegressionGateResource(dg.ConfigurableResource):
    """How much worse an app's newest completed evaluation run may be than the previous one of
    the same evaluations (`CES_REGRESSION_*`), and how a failed gate is reported."""

    pass_rate_points: float
    score_pct: float
    latency_pct: float
    severity: str

    @classmethod
    def from_settings(cls, settings: OrchestrationSettings) -> RegressionGateResource:
        return cls(
            pass_rate_points=settings.regression_pass_rate_points,
            score_pct=settings.regression_score_pct,
            latency_pct=settings.regression_latency_pct,
            severity=settings.regression_severity,
        )

    def query_params(self, app: str) -> dict[str, Any]:
        """The parameters of the named query `evaluation_regressions` that this gate judges by."""
        return {
            "app": app,
            "max_pass_rate_drop": self.pass_rate_points / 100,
            "max_score_drop": self.score_pct / 100,
            "max_latency_rise": self.latency_pct / 100,
        }


def resources_from_settings(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    return {
        "ces": CesResource.from_settings(settings.ces),
        "lake": LakeResource(root=settings.storage.lake),
        "warehouse": WarehouseResource.from_settings(settings.storage),
        "regression_gate": RegressionGateResource.from_settings(settings.orchestration),
    }
