"""Dagster's code location `defs`, built from `Settings` when Dagster loads it (not at import)."""

from __future__ import annotations

import logging

import dagster as dg

from pipelines.config import Settings, unknown_variables
from pipelines.orchestration.conversation_assets import conversation_assets, conversation_jobs
from pipelines.orchestration.evaluation_assets import (
    EVALUATION_ASSETS,
    ingest_evaluation_runs_job,
    rebuild_evaluation_runs_job,
    start_evaluation_job,
    started_evaluation_sensor,
    unfinished_evaluation_runs_sensor,
)
from pipelines.orchestration.maintenance import warehouse_maintenance_daily, warehouse_maintenance_job
from pipelines.orchestration.partitions import app_day_partitions
from pipelines.orchestration.report_assets import (
    REPORT_ASSETS,
    report_after_loads_sensor,
    report_dashboard_job,
)
from pipelines.orchestration.resources import resources_from_settings
from pipelines.orchestration.retention import run_retention
from pipelines.orchestration.schedules import configured_apps_sensor, schedules


def build_definitions(settings: Settings) -> dg.Definitions:
    """Every asset, check, job, schedule and sensor, configured by `settings`."""
    orchestration = settings.orchestration
    assets = conversation_assets(
        app_day_partitions(orchestration.start_date),
        days_per_run=orchestration.days_per_run,
        freshness_hours=orchestration.freshness_hours,
    )
    ingest_job, rebuild_job = conversation_jobs(assets)
    retention_job, retention_schedule = run_retention(orchestration.run_retention_days)
    return dg.Definitions(
        assets=[*assets, *EVALUATION_ASSETS, *REPORT_ASSETS],
        jobs=[
            ingest_job,
            rebuild_job,
            ingest_evaluation_runs_job,
            rebuild_evaluation_runs_job,
            start_evaluation_job,
            report_dashboard_job,
            warehouse_maintenance_job,
            retention_job,
        ],
        schedules=[
            *schedules(orchestration, ingest_job, ingest_evaluation_runs_job),
            warehouse_maintenance_daily,
            retention_schedule,
        ],
        sensors=[
            unfinished_evaluation_runs_sensor,
            started_evaluation_sensor,
            configured_apps_sensor,
            report_after_loads_sensor,
        ],
        resources=resources_from_settings(settings),
        # A run's steps follow one another (fetch, flatten, load), so they share one process;
        # runs, not steps, are what run side by side, and the run launcher decides where.
        executor=dg.in_process_executor,
    )


@dg.definitions
def defs() -> dg.Definitions:
    settings = Settings.from_env()
    for unknown in unknown_variables():  # said where `dagster dev` or a daemon loads the code
        logging.getLogger(__name__).warning(unknown)
    return build_definitions(settings)
