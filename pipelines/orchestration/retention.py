"""Dagster's records of runs that later runs redid, deleted once they are old.

Dagster keeps every run's event log and asset events, and none of its settings prunes them (its
retention covers schedule and sensor ticks): on SQLite the hourly schedule adds ~0.45 MB a run,
~4 GB a year an app, growing with the number of runs rather than with what the warehouse holds.
A finished run older than `CES_RUN_RETENTION_DAYS` is deleted once every asset partition it
materialized was materialized again by a later run (a run that materialized nothing, such as a
failed one, qualifies at once). What the UI shows for each partition, its latest
materialization with its metadata and checks, stays; so does every run that holds one.

Each run is looked at on the days it is between `keep_days` and `keep_days + examine_days` old
(a week: the schedule may miss a few days), so a day's job costs a week of runs however long
the history: a kept run that a backfill redoes later stays (run the job once with a larger
`examine_days` to clear those)."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import dagster as dg
from pydantic import Field

from pipelines.orchestration.dagster_private import remove_run_leftovers, run_log

FINISHED = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]


@dataclass(frozen=True)
class Retention:
    deleted: int
    kept: int
    """Runs old enough that still hold a partition's latest materialization."""


def redone(instance: dg.DagsterInstance, run_id: str) -> bool:
    """Was every asset partition this run materialized materialized again later?"""
    for entry in run_log(instance, run_id):
        event = entry.dagster_event
        if event is None or event.event_type != dg.DagsterEventType.ASSET_MATERIALIZATION:
            continue
        partition = event.partition
        later = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=event.asset_key,
                asset_partitions=None if partition is None else [partition],
                after_timestamp=entry.timestamp,
            ),
            limit=1,
            ascending=True,
        )
        if not later.records:
            return False
    return True


def delete_redone_runs(
    instance: dg.DagsterInstance, keep_days: int, examine_days: int = 7, now: datetime | None = None
) -> Retention:
    """Delete the finished runs created `keep_days` to `keep_days + examine_days` before `now`
    whose work was redone."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=keep_days)
    window = dg.RunsFilter(
        statuses=FINISHED, created_before=cutoff, created_after=cutoff - timedelta(days=examine_days)
    )
    deleted = kept = 0
    for record in instance.get_run_records(window):
        run_id = record.dagster_run.run_id
        if redone(instance, run_id):
            instance.delete_run(run_id)
            remove_run_leftovers(instance, run_id)
            deleted += 1
        else:
            kept += 1
    return Retention(deleted, kept)


class RetentionConfig(dg.Config):
    keep_days: int = Field(ge=0)
    """No default of its own: the job's is `CES_RUN_RETENTION_DAYS`, a run config gives both."""
    examine_days: int = Field(7, ge=1)


@dg.op(description="Delete the records of old finished runs whose work later runs redid.")
def run_retention_op(context: dg.OpExecutionContext, config: RetentionConfig) -> dg.Output[None]:
    result = delete_redone_runs(context.instance, config.keep_days, config.examine_days)
    summary = (
        f"{result.deleted} run{'' if result.deleted == 1 else 's'} older than {config.keep_days} days "
        "whose work later runs redid deleted, "
        f"{result.kept} kept (each holds a partition's latest materialization)"
    )
    context.log.info(summary)
    return dg.Output(
        None, metadata={"deleted_runs": result.deleted, "kept_runs": result.kept, "summary": summary}
    )


def run_retention(keep_days: int) -> tuple[dg.JobDefinition, dg.ScheduleDefinition]:
    """The job, which keeps `keep_days` (`CES_RUN_RETENTION_DAYS`) unless its run config says
    otherwise, and its schedule: daily at 03:45 UTC, on whenever the daemon runs."""

    @dg.job(
        description="Delete Dagster's records of old runs whose work later runs redid.",
        config=dg.RunConfig(ops={"run_retention_op": RetentionConfig(keep_days=keep_days)}),
    )
    def run_retention_job() -> None:
        run_retention_op()

    schedule = dg.ScheduleDefinition(
        name="run_retention_daily",
        job=run_retention_job,
        cron_schedule="45 3 * * *",
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"Daily at 03:45 UTC: delete runs older than {keep_days} days that later runs redid.",
    )
    return run_retention_job, schedule
