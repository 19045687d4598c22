"""Dagster's code location `defs`, built from `Settings` when Dagster loads it (not at import)."""

from __future__ import annotations

import logging

import dagster as dg

from pipelines.config import Settings, unknown_variables
from pipelines.orchestration import evaluation_assets, maintenance, report_assets
from pipelines.orchestration.conversation_assets import conversation_assets, conversation_jobs
from pipelines.orchestration.partitions import app_day_partitions
from pipelines.orchestration.resources import resources_from_settings
from pipelines.orchestration.retention import run_retention
from pipelines.orchestration.schedules import configured_apps_sensor, schedules


def build_definitions(settings: Settings) -> dg.Definitions:
    """Every asset, check, job, schedule and sensor: those the settings shape, and the modules' own."""
    orchestration = settings.orchestration
    assets = conversation_assets(
        app_day_partitions(orchestration.start_date),
        days_per_run=orchestration.days_per_run,
        freshness_hours=orchestration.freshness_hours,
    )
    ingest_job, rebuild_job = conversation_jobs(assets)
    retention_job, retention_schedule = run_retention(orchestration.run_retention_days)
    configured = dg.Definitions(
        assets=assets,
        jobs=[ingest_job, rebuild_job, retention_job],
        schedules=[
            *schedules(orchestration, ingest_job, evaluation_assets.ingest_evaluation_runs_job),
            retention_schedule,
        ],
        sensors=[configured_apps_sensor],
        resources=resources_from_settings(settings),
        # A run's steps follow one another (fetch, flatten, load), so they share one process;
        # runs, not steps, are what run side by side, and the run launcher decides where.
        executor=dg.in_process_executor,
    )
    return dg.Definitions.merge(
        configured, evaluation_assets.DEFINITIONS, report_assets.DEFINITIONS, maintenance.DEFINITIONS
    )


@dg.definitions
def defs() -> dg.Definitions:
    settings = Settings.from_env()
    for unknown in unknown_variables():  # said where `dagster dev` or a daemon loads the code
        logging.getLogger(__name__).warning(unknown)
    return build_definitions(settings)
