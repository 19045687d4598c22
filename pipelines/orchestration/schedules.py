"""Schedules: conversations hourly (today and `CES_LOOKBACK_DAYS`: late data), evaluations daily; apps."""

from datetime import UTC, date, datetime, timedelta
from typing import Any

import dagster as dg

from pipelines.config import OrchestrationSettings
from pipelines.orchestration.partitions import APP_PARTITIONS, plan_runs
from pipelines.orchestration.resources import CesResource


def days_to_refresh(now: datetime, lookback_days: int, first_day: date) -> list[date]:
    """The UTC days an hourly run ingests: today and `lookback_days` before it, never before `first_day`."""
    today = (now.astimezone(UTC) if now.tzinfo else now).date()
    days = [today - timedelta(days=offset) for offset in range(lookback_days, -1, -1)]
    return [day for day in days if day >= first_day]


def schedules(
    settings: OrchestrationSettings,
    conversations_job: Any,
    evaluations_job: Any,
) -> list[dg.ScheduleDefinition]:
    @dg.schedule(
        name="conversations_hourly",
        job=conversations_job,
        cron_schedule=settings.conversations_cron,
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Hourly: ingest today's conversations and the lookback days before (late data), "
        "one run per app.",
    )
    def conversations_hourly(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        now = context.scheduled_execution_time
        stamp = now.strftime("%Y%m%dT%H%M")
        days = days_to_refresh(now, settings.lookback_days, settings.start_date)
        apps = context.instance.get_dynamic_partitions(APP_PARTITIONS.name)
        runs = plan_runs([(app, day) for app in apps for day in days], settings.days_per_run)
        return [dg.RunRequest(run_key=f"{run.label}@{stamp}", tags=run.tags()) for run in runs]

    @dg.schedule(
        name="evaluation_runs_daily",
        job=evaluations_job,
        cron_schedule=settings.evaluations_cron,
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Daily: fetch every evaluation run of every app.",
    )
    def evaluation_runs_daily(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        stamp = context.scheduled_execution_time.strftime("%Y%m%d")
        return [
            dg.RunRequest(partition_key=app, run_key=f"{app}@{stamp}")
            for app in context.instance.get_dynamic_partitions(APP_PARTITIONS.name)
        ]

    return [conversations_hourly, evaluation_runs_daily]


@dg.sensor(minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.RUNNING)
def configured_apps_sensor(
    context: dg.SensorEvaluationContext, ces: CesResource
) -> dg.SensorResult | dg.SkipReason:
    """Register every app of `CES_APPS` as a partition, so schedules and backfills cover it."""
    known = set(context.instance.get_dynamic_partitions(APP_PARTITIONS.name))
    new = [app for app in ces.settings().apps if app not in known]
    if not new:
        return dg.SkipReason("every configured app is already a partition")
    return dg.SensorResult(dynamic_partitions_requests=[APP_PARTITIONS.build_add_request(new)])
