"""Schedules and the app sensor: conversations hourly (today plus a lookback for late data),
evaluation runs daily, and every app of `CES_APPS` registered as a partition.

Conversations arrive late and in-progress ones (no `endTime`) still change, so the hourly run
refreshes the current UTC day and the `CES_LOOKBACK_DAYS` before it; a conversation seen
again replaces its old rows.
"""

import os
from datetime import UTC, date, datetime, timedelta

import dagster as dg

from pipelines.config import ces_settings_from_env
from pipelines.orchestration.conversation_assets import ingest_conversations_job
from pipelines.orchestration.evaluation_assets import ingest_evaluation_runs_job
from pipelines.orchestration.partitions import APP_PARTITIONS, START_DATE, partition_key

LOOKBACK_DAYS = int(os.environ.get("CES_LOOKBACK_DAYS") or 2)
CONVERSATIONS_CRON = os.environ.get("CES_CONVERSATIONS_CRON") or "5 * * * *"
EVALUATIONS_CRON = os.environ.get("CES_EVALUATIONS_CRON") or "30 4 * * *"


def days_to_refresh(now: datetime, lookback_days: int, first_day: date) -> list[date]:
    """The UTC days an hourly run ingests: today and `lookback_days` before it, never before `first_day`."""
    today = (now.astimezone(UTC) if now.tzinfo else now).date()
    days = [today - timedelta(days=offset) for offset in range(lookback_days, -1, -1)]
    return [day for day in days if day >= first_day]


@dg.schedule(
    job=ingest_conversations_job,
    cron_schedule=CONVERSATIONS_CRON,
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Hourly: ingest today's conversations and the lookback days before (late data), every app.",
)
def conversations_hourly(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    now = context.scheduled_execution_time
    stamp = now.strftime("%Y%m%dT%H%M")
    apps = context.instance.get_dynamic_partitions(APP_PARTITIONS.name)
    return [
        dg.RunRequest(partition_key=partition_key(app, day), run_key=f"{app}|{day.isoformat()}@{stamp}")
        for day in days_to_refresh(now, LOOKBACK_DAYS, date.fromisoformat(START_DATE))
        for app in apps
    ]


@dg.schedule(
    job=ingest_evaluation_runs_job,
    cron_schedule=EVALUATIONS_CRON,
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


@dg.sensor(minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.RUNNING)
def configured_apps_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    """Register every app of `CES_APPS` as a partition, so schedules and backfills cover it."""
    known = set(context.instance.get_dynamic_partitions(APP_PARTITIONS.name))
    new = [app for app in ces_settings_from_env().apps if app not in known]
    if not new:
        return dg.SkipReason("every configured app is already a partition")
    return dg.SensorResult(dynamic_partitions_requests=[APP_PARTITIONS.build_add_request(new)])


SCHEDULES = [conversations_hourly, evaluation_runs_daily]
SENSORS = [configured_apps_sensor]
