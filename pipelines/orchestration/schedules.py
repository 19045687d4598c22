"""Schedules: conversations hourly (today and `CES_LOOKBACK_DAYS`: late data; an app behind caught up),
evaluations daily; apps."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import dagster as dg

from pipelines.config import ConfigError, OrchestrationSettings
from pipelines.orchestration.keys import WAREHOUSE_CONVERSATIONS
from pipelines.orchestration.partitions import (
    APP_PARTITIONS,
    IN_FLIGHT,
    MAX_RUNTIME,
    RANGE_START_TAG,
    RunRange,
    app_day_partitions,
    bounded,
    partition_key,
    plan_runs,
)
from pipelines.orchestration.resources import CesResource

SCHEDULE_TAG = "dagster/schedule_name"
"""The tag Dagster's scheduler puts on every run a schedule requests (`DagsterRun.tags_for_schedule`)."""


CATCH_UP_DAYS = 31
"""How far back an hourly run reaches for an app behind (an outage, a daemon stopped): a month of
days, one run of the default `CES_DAYS_PER_RUN`; days older than that take a deliberate `ingest`."""


def _utc_day(now: datetime) -> date:
    return (now.astimezone(UTC) if now.tzinfo else now).date()


def _days(first: date, until: date) -> list[date]:
    return [first + timedelta(days=offset) for offset in range((until - first).days)]


def days_to_refresh(now: datetime, lookback_days: int, first_day: date) -> list[date]:
    """The UTC days an hourly run ingests: today and `lookback_days` before it, never before `first_day`."""
    today = _utc_day(now)
    return _days(max(today - timedelta(days=lookback_days), first_day), today + timedelta(days=1))


@dataclass
class Refresh:
    """What an hourly run of the apps loads now: the usual days (`days_to_refresh`) and the days an
    app is behind (`catch_up`), in runs of their own, so that a day that fails on every attempt
    holds back none of the usual days; a line for each app caught up (`catching_up`) or behind
    further than `CATCH_UP_DAYS` (`left_behind`)."""

    usual: list[tuple[str, date]]
    catch_up: list[tuple[str, date]]
    catching_up: list[str]
    left_behind: list[str]

    def runs(self, days_per_run: int) -> list[RunRange]:
        return plan_runs(self.catch_up, days_per_run) + plan_runs(self.usual, days_per_run)

    def caught_up(self) -> str | None:
        """The apps caught up in a line: the first one's, and how many more (after an outage,
        every app is behind: a line each would be hundreds, which cron mails)."""
        if not self.catching_up:
            return None
        first, more = self.catching_up[0], len(self.catching_up) - 1
        return f"{first}; {more} more app{'s' if more > 1 else ''} caught up too" if more else first


def refresh(
    instance: dg.DagsterInstance, apps: Sequence[str], now: datetime, lookback_days: int, first_day: date
) -> Refresh:
    """The usual days of each app, and those it is behind, by Dagster's public partition status of
    its conversation tables: every day the hourly runs it missed would have refreshed (from
    `lookback_days` before the day after its newest loaded day), and every day whose latest load
    failed, up to `CATCH_UP_DAYS` back. The schedule and `ingest` without `--since` (from cron)
    catch up alike after an outage. An app never loaded gets the usual days."""
    usual = days_to_refresh(now, lookback_days, first_day)
    if not usual:
        return Refresh([], [], [], [])
    today = _utc_day(now)
    reach = max(first_day, today - timedelta(days=CATCH_UP_DAYS - 1))
    partitions_def = app_day_partitions(first_day)
    recent = _statuses(instance, partitions_def, apps, reach, today)
    newest = {app: max(_loaded(recent[app]), default=None) for app in apps}
    unloaded = [app for app in apps if newest[app] is None]
    older = _statuses(instance, partitions_def, unloaded, first_day, reach)
    done = Refresh([(app, day) for app in apps for day in usual], [], [], [])
    for app in apps:
        loaded = newest[app] or max(_loaded(older.get(app, {})), default=None)
        failed = {day for day in _failed(recent[app]) if day < usual[0]}
        since = None if loaded is None else max(loaded + timedelta(days=1 - lookback_days), first_day)
        missed = set() if since is None else set(_days(max(since, reach), usual[0]))
        days = sorted(missed | failed)
        done.catch_up.extend((app, day) for day in days)
        if loaded is not None and since is not None and since < reach and loaded < reach:
            done.left_behind.append(
                f"{app}: its newest loaded day, {loaded}, is older than the {CATCH_UP_DAYS} days an hourly "
                f"run catches up; loading {reach} on. Load the days before with: ces-pipeline ingest --app "
                f"{app} --since {since} --until {reach}"
            )
        elif days:
            said = f"{app}: catching up {len(days)} day{'s' if len(days) > 1 else ''} from {days[0]}"
            said += f", its newest loaded day being {loaded}" if loaded else ""
            said += f", {len(failed)} whose latest load failed" if failed else ""
            done.catching_up.append(said)
    return done


def _loaded(states: dict[date, dg.AssetPartitionStatus]) -> list[date]:
    return [day for day, state in states.items() if state == dg.AssetPartitionStatus.MATERIALIZED]


def _failed(states: dict[date, dg.AssetPartitionStatus]) -> set[date]:
    return {day for day, state in states.items() if state == dg.AssetPartitionStatus.FAILED}


def _statuses(
    instance: dg.DagsterInstance,
    partitions_def: dg.MultiPartitionsDefinition,
    apps: Sequence[str],
    first: date,
    until: date,
) -> dict[str, dict[date, dg.AssetPartitionStatus]]:
    """The status of each app's conversation tables on each day of [first, until) that has one."""
    keys = {str(partition_key(app, day)): (app, day) for app in apps for day in _days(first, until)}
    statuses: dict[str, dict[date, dg.AssetPartitionStatus]] = {app: {} for app in apps}
    if not keys:
        return statuses
    found = instance.get_status_by_partition(WAREHOUSE_CONVERSATIONS, list(keys), partitions_def) or {}
    for key, state in found.items():
        if state is not None:
            app, day = keys[key]
            statuses[app][day] = state
    return statuses


def apps_still_loading(
    instance: dg.DagsterInstance,
    schedule_name: str,
    partitions_def: dg.MultiPartitionsDefinition,
    now: datetime,
) -> set[str]:
    """The apps with a run of this schedule still queued or running. An hour whose runs take longer
    than an hour (many apps, one run at a time, a slow or throttled API) would otherwise queue a
    run per app on every tick, and the queue would grow without end; the next tick's lookback
    covers the days such an app's skipped run would have fetched. A run created more than
    `MAX_RUNTIME` ago holds nothing back: its worker died with the machine, say (the default run
    launcher cannot tell), and the app's loads must not stop with it."""
    records = instance.get_run_records(
        dg.RunsFilter(statuses=IN_FLIGHT, tags={SCHEDULE_TAG: schedule_name}, created_after=now - MAX_RUNTIME)
    )
    starts = (record.dagster_run.tags.get(RANGE_START_TAG) for record in records)
    return {partitions_def.get_partition_key_from_str(key).keys_by_dimension["app"] for key in starts if key}


def scheduled_apps(instance: dg.DagsterInstance, ces: CesResource) -> list[str] | dg.SkipReason:
    """The apps a schedule covers: those of `CES_APPS` already registered as partitions (the
    `configured_apps_sensor` registers a new one within minutes). An app taken out of `CES_APPS`
    is fetched no more, rather than failing every hour once it is gone from CES; its partitions
    and rows stay."""
    apps = ces.settings().apps
    if not apps:
        return dg.SkipReason("CES_APPS is not set: there is no app to fetch")
    registered = set(instance.get_dynamic_partitions(APP_PARTITIONS.name))
    return [app for app in apps if app in registered] or dg.SkipReason(
        "no app of CES_APPS is registered as a partition yet (configured_apps_sensor registers them)"
    )


def _cron(variable: str, value: str) -> str:
    """`value`, a schedule Dagster takes, or a ConfigError naming `variable`: one of the right shape
    but out of range ('61 * * * *', the 31st of February) was a stack trace where the definitions
    load (every load command, the UI)."""
    try:
        dg.ScheduleDefinition(name="check", cron_schedule=value, job_name="check")
    except dg.DagsterInvalidDefinitionError:
        raise ConfigError(
            f"{variable} must be a cron schedule of five fields, each in its range, such as '5 * * * *' "
            f"(or @hourly, @daily, …), got {value!r}"
        ) from None
    return value


def schedules(
    settings: OrchestrationSettings,
    conversations_job: Any,
    evaluations_job: Any,
) -> list[dg.ScheduleDefinition]:
    partitions_def = app_day_partitions(settings.start_date)

    @dg.schedule(
        name="conversations_hourly",
        job=conversations_job,
        cron_schedule=_cron("CES_CONVERSATIONS_CRON", settings.conversations_cron),
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Hourly: ingest today's conversations and the lookback days before (late data), "
        "one run per app of CES_APPS, and runs of their own for the days an app is behind after an "
        f"outage or a failed load (up to {CATCH_UP_DAYS} days back); an app whose run of an earlier "
        "tick is still queued or running is skipped.",
    )
    def conversations_hourly(
        context: dg.ScheduleEvaluationContext, ces: CesResource
    ) -> list[dg.RunRequest] | dg.SkipReason:
        apps = scheduled_apps(context.instance, ces)
        if isinstance(apps, dg.SkipReason):
            return apps
        now = context.scheduled_execution_time
        stamp = now.strftime("%Y%m%dT%H%M")
        busy = apps_still_loading(context.instance, "conversations_hourly", partitions_def, now) & set(apps)
        ready = [app for app in apps if app not in busy]
        if busy:
            note = (
                f"{len(busy)} of {len(apps)} apps skipped: their run of an earlier tick is still "
                f"queued or running ({', '.join(sorted(busy)[:3])}{', …' if len(busy) > 3 else ''})"
            )
            if not ready:
                return dg.SkipReason(note)
            context.log.warning(note)
        due = refresh(context.instance, ready, now, settings.lookback_days, settings.start_date)
        if caught_up := due.caught_up():
            context.log.info(caught_up)
        for line in due.left_behind:
            context.log.warning(line)
        runs = due.runs(settings.days_per_run)
        return [dg.RunRequest(run_key=f"{run.label}@{stamp}", tags=bounded(run.tags())) for run in runs]

    @dg.schedule(
        name="evaluation_runs_daily",
        job=evaluations_job,
        cron_schedule=_cron("CES_EVALUATIONS_CRON", settings.evaluations_cron),
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Daily: fetch every evaluation run of every app of CES_APPS.",
    )
    def evaluation_runs_daily(
        context: dg.ScheduleEvaluationContext, ces: CesResource
    ) -> list[dg.RunRequest] | dg.SkipReason:
        apps = scheduled_apps(context.instance, ces)
        if isinstance(apps, dg.SkipReason):
            return apps
        stamp = context.scheduled_execution_time.strftime("%Y%m%d")
        return [dg.RunRequest(partition_key=app, run_key=f"{app}@{stamp}", tags=bounded()) for app in apps]

    return [conversations_hourly, evaluation_runs_daily]


@dg.sensor(minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.RUNNING)
def configured_apps_sensor(
    context: dg.SensorEvaluationContext, ces: CesResource
) -> dg.SensorResult | dg.SkipReason:
    """Register every app of `CES_APPS` as a partition, so schedules and backfills cover it."""
    apps = ces.settings().apps
    if not apps:
        return dg.SkipReason("CES_APPS is not set: no app to add as a partition")
    known = set(context.instance.get_dynamic_partitions(APP_PARTITIONS.name))
    new = [app for app in apps if app not in known]
    if not new:
        return dg.SkipReason("every configured app is already a partition")
    return dg.SensorResult(dynamic_partitions_requests=[APP_PARTITIONS.build_add_request(new)])
