"""How conversation assets are partitioned: one partition per (app, UTC day).

The app dimension is dynamic: the apps of `CES_APPS` are registered as partitions by the CLI
and by a sensor, so adding an app needs no code change, and one app's failure never blocks
another's. The first day comes from `CES_START_DATE`; today is included (`end_offset=1`)
because the hourly schedule refreshes it.
"""

import os
from collections.abc import Iterable
from datetime import date

import dagster as dg

START_DATE = os.environ.get("CES_START_DATE") or "2026-01-01"

DAILY_PARTITIONS = dg.DailyPartitionsDefinition(start_date=START_DATE, timezone="UTC", end_offset=1)
APP_PARTITIONS = dg.DynamicPartitionsDefinition(name="ces_app")
APP_DAY_PARTITIONS = dg.MultiPartitionsDefinition({"date": DAILY_PARTITIONS, "app": APP_PARTITIONS})

CES_API_POOL = "ces_api"
"""Concurrency pool of every step that calls the CES API (limit set on the instance)."""

WAREHOUSE_POOL = "warehouse_write"
"""Concurrency pool of DuckDB writes: one at a time, DuckDB has a single writer."""


def partition_key(app: str, day: date) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"app": app, "date": day.isoformat()})


def partition_app_day(context: dg.AssetExecutionContext) -> tuple[str, date]:
    keys = context.partition_key.keys_by_dimension
    return keys["app"], date.fromisoformat(keys["date"])


def register_apps(instance: dg.DagsterInstance, apps: Iterable[str]) -> list[str]:
    """Add the apps that are not partitions yet; returns the ones added."""
    known = set(instance.get_dynamic_partitions(APP_PARTITIONS.name))
    new = [app for app in dict.fromkeys(apps) if app not in known]
    if new:
        instance.add_dynamic_partitions(APP_PARTITIONS.name, new)
    return new
