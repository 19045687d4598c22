"""The partitioning of every conversation asset: one partition per UTC day.

The first day comes from `CES_START_DATE` (default 2026-01-01); the current, still-growing
day is included (`end_offset=1`) because scheduled runs refresh it.
"""

from __future__ import annotations

import os
from datetime import date

import dagster as dg

START_DATE = os.environ.get("CES_START_DATE") or "2026-01-01"

DAILY_PARTITIONS = dg.DailyPartitionsDefinition(start_date=START_DATE, timezone="UTC", end_offset=1)

CES_API_POOL = "ces_api"
"""Concurrency pool of every step that calls the CES API (limit set on the instance)."""

WAREHOUSE_POOL = "warehouse_write"
"""Concurrency pool of DuckDB writes: one at a time, DuckDB has a single writer."""


def partition_day(context: dg.AssetExecutionContext) -> date:
    return date.fromisoformat(context.partition_key)
