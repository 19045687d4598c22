"""`ingest` and `rebuild`: loads, each a Dagster run of the instance, with progress and what checks found."""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pipelines.cli.common import check_writable, console, counted, days_between, said_once
from pipelines.config import CesSettings, Settings
from pipelines.errors import UsageError
from pipelines.resource_names import apps_named

if TYPE_CHECKING:
    from pipelines.orchestration.partitions import RunRange
    from pipelines.orchestration.runs import PlannedRun, RunOutcome


def _window(settings: Settings, since: date, until: date) -> list[date]:
    """The UTC days [since, until), all of them daily partitions."""
    last = datetime.now(UTC).date()
    if since > last:
        raise UsageError(f"--since {since} is after today (UTC), {last}: no conversation started then yet")
    days = days_between(since, until)
    first = settings.orchestration.start_date
    if since < first:
        raise UsageError(
            f"--since {since} is before the first daily partition, {first}: set CES_START_DATE={since} "
            "to ingest earlier days"
        )
    if days[-1] > last:
        raise UsageError(f"--until {until} is after tomorrow (UTC): there is nothing to ingest after {last}")
    return days


def _refresh(settings: Settings, apps: Sequence[str], until: date) -> list[RunRange]:
    """The runs the hourly schedule would start now, an app behind caught up as it would be:
    `ingest` without `--since` (from cron, say) loads the days a schedule's run would."""
    from pipelines.orchestration.partitions import register_apps
    from pipelines.orchestration.runs import dagster_instance
    from pipelines.orchestration.schedules import refresh

    orchestration = settings.orchestration
    now = datetime.now(UTC)
    if orchestration.start_date > now.date():
        raise UsageError(
            f"CES_START_DATE {orchestration.start_date} is after today (UTC): nothing to ingest yet"
        )
    instance = dagster_instance(settings, _notice)
    register_apps(instance, apps)
    due = refresh(instance, apps, now, orchestration.lookback_days, orchestration.start_date)
    if caught_up := due.caught_up():
        _notice(caught_up)
    for line in due.left_behind:
        console.print(f"[yellow]warning: {escape(line)}", soft_wrap=True)
    runs = due.runs(orchestration.days_per_run)
    _window(settings, min(run.first for run in runs), until)  # `--until` checked as with `--since`
    last = until - timedelta(days=1)
    return [dataclasses.replace(run, last=min(run.last, last)) for run in runs if run.first <= last]


_JOBS = {"ingest": ("ingest_conversations", "ingested"), "rebuild": ("rebuild_conversations", "rebuilt")}


def _notice(line: str) -> None:
    """A line from the runs' machinery for the person waiting (above a progress display)."""
    console.print(f"[yellow]{escape(line)}", soft_wrap=True)


def execute(
    settings: Settings, job_name: str, runs: Sequence[PlannedRun], apps: Sequence[str], **options: Any
) -> list[RunOutcome]:
    """Run `job_name` once per planned run in the instance of the settings, `apps` registered
    there as partitions; `options` go to `execute_runs` (run config, an outcome callback)."""
    from pipelines.definitions import build_definitions
    from pipelines.orchestration.partitions import register_apps
    from pipelines.orchestration.runs import dagster_instance, execute_runs

    if not settings.orchestration.queue_runs:  # queued, the runs write on the daemon's machine
        check_writable(settings.storage)
    instance = dagster_instance(settings, _notice)
    register_apps(instance, apps)
    definitions = build_definitions(settings)
    return execute_runs(
        definitions, job_name, runs, settings=settings, instance=instance, notice=_notice, **options
    )


def load_conversations(
    settings: Settings, command: str, ranges: Sequence[RunRange], *, quiet: bool = False
) -> int:
    """Run the command's job over the ranges of partitions, a run each, with a live progress display
    (`quiet`: none, and only what went wrong said: cron mails what a command prints)."""
    from pipelines.orchestration.runs import PlannedRun

    job_name, verb = _JOBS[command]
    partitions = sum(run.days for run in ranges)
    totals = {"conversations": 0, "pages": 0, "requests": 0, "rejects": 0}
    failures: list[RunOutcome] = []
    errors: dict[str, str] = {}
    checks = CheckReport()
    started = time.monotonic()
    with _progress(quiet) as progress:
        task = progress.add_task(f"{verb} partitions", total=partitions, detail=f"{len(ranges)} runs")

        def on_outcome(outcome: RunOutcome) -> None:
            totals["conversations"] += outcome.value("warehouse__conversation_tables", "conversations_rows")
            totals["pages"] += outcome.value("raw__conversation_pages", "pages")
            totals["requests"] += outcome.value("raw__conversation_pages", "requests")
            totals["rejects"] += outcome.value("warehouse__conversation_tables", "rejects_rows")
            if not outcome.success and not outcome.interrupted:
                failures.append(outcome)
                progress.console.print(f"[red]✗ {escape(said_once(errors, outcome.label, outcome.error))}")
            checks.add(outcome, progress.console.print)
            rate = totals["conversations"] / max(time.monotonic() - started, 1e-9)
            detail = f"{totals['conversations']} conversations · {rate:.0f}/s"
            if command == "ingest":
                detail = f"{totals['pages']} pages · {totals['requests']} requests · {detail}"
            done = 0 if outcome.interrupted else outcome.partitions  # the bar must not end full
            progress.update(task, advance=done, detail=detail)
            if outcome.success and not console.is_terminal and not quiet:
                (bar,) = progress.tasks
                loaded = outcome.value("warehouse__conversation_tables", "conversations_rows")
                elapsed = timedelta(seconds=round(bar.elapsed or 0))
                so_far = f"{bar.completed:.0f}/{partitions} partitions, {elapsed}"
                progress.console.print(f"{escape(outcome.label)}: {loaded} conversations ({so_far})")

        runs = [PlannedRun.for_range(run) for run in ranges]
        execute(settings, job_name, runs, [run.app for run in ranges], on_outcome=on_outcome)
    _say_rejected(totals["rejects"])
    checks.say_warnings(len(ranges))
    if len(failures) == len(ranges) > 1 and len(errors) == 1:
        console.print(f"[red]all {len(ranges)} runs failed with the error above: mend it, then run again.")
        return 1
    if failures:
        console.print(f"[red]{len(failures)} of {len(ranges)} runs failed. Retry one alone with:")
        by_label = {run.label: run for run in ranges}
        for failure in failures:
            run = by_label[failure.label]
            window = f"--since {run.first} --until {run.last + timedelta(days=1)}"
            console.print(f"  ces-pipeline {command} {window} --app {run.app}", soft_wrap=True, markup=False)
        return 1
    if not quiet:
        console.print(
            f"[green]{verb} {counted(partitions, 'partition')} in {counted(len(ranges), 'run')}: "
            f"{counted(totals['conversations'], 'conversation')} loaded."
        )
    return 0


def load_evaluations(
    settings: Settings,
    apps: Sequence[str],
    run_config: dict | None = None,
    *,
    replay: bool = False,
    unsaid: Collection[str] = (),
    quiet: bool = False,
) -> int:
    """Run the evaluation job per app (`replay`: reload each fetch kept in the raw lake) and report
    it, but what the checks `unsaid` (`asset:check`) found: the caller says it (`quiet`: only what
    went wrong)."""
    from pipelines.orchestration.checks import GATE_CHECK
    from pipelines.orchestration.runs import PlannedRun

    job_name = "rebuild_evaluation_runs" if replay else "ingest_evaluation_runs"
    runs = [PlannedRun.for_partition(app) for app in apps]

    checks = CheckReport(each_run=[GATE_CHECK], unsaid=unsaid)  # what regressed is each app's own
    loaded = 0
    with _progress(quiet) as progress:
        verb = "replaying evaluation run fetches" if replay else "fetching evaluation runs"
        task = progress.add_task(verb, total=len(apps), detail="")

        def on_outcome(outcome: RunOutcome) -> None:
            nonlocal loaded
            rows = outcome.value("warehouse__evaluation_tables", "evaluation_runs_rows")
            loaded += rows
            if outcome.success and not console.is_terminal and not quiet:  # a log, CI: a line per app
                progress.console.print(
                    f"evaluation runs of {escape(outcome.label)}: {counted(rows, 'run row')}"
                )
            checks.add(outcome, progress.console.print)
            progress.update(
                task, advance=0 if outcome.interrupted else 1, detail=f"{counted(loaded, 'run row')} loaded"
            )

        outcomes = execute(settings, job_name, runs, apps, run_config=run_config, on_outcome=on_outcome)
    failed = [outcome for outcome in outcomes if not outcome.success]
    errors: dict[str, str] = {}
    for outcome in failed:
        console.print(f"[red]✗ evaluation runs of {escape(said_once(errors, outcome.label, outcome.error))}")
    runs = sum(outcome.value("warehouse__evaluation_tables", "evaluation_runs_rows") for outcome in outcomes)
    results = sum(
        outcome.value("warehouse__evaluation_tables", "evaluation_results_rows") for outcome in outcomes
    )
    fetches = sum(outcome.value("warehouse__evaluation_tables", "fetches_loaded") for outcome in outcomes)
    said = (
        f"evaluation runs: {fetches} fetch{'' if fetches == 1 else 'es'} of "
        f"{counted(len(outcomes) - len(failed), 'app')} loaded ({counted(runs, 'run row')}, "
        f"{counted(results, 'result row')} written)"
    )
    if failed:  # nothing of a failed fetch is stored, so the app's next fetch asks for it all again
        console.print(f"[red]{said}; {len(failed)} of {counted(len(outcomes), 'app')} failed.")
    elif not quiet:
        console.print(f"[green]{said}.")
    checks.say_warnings(len(outcomes), "app")
    _say_rejected(sum(outcome.value("warehouse__evaluation_tables", "rejects_rows") for outcome in outcomes))
    return 1 if failed else 0


def _progress(quiet: bool) -> Progress:
    """A live progress display of a load's runs: off where the console is no terminal (a log gets
    a line per run instead) or the command is to be `quiet`."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet or not console.is_terminal,
    )


class CheckReport:
    """What the runs' asset checks found: a failed check of ERROR severity said at once with its
    run, and so is a warning of the checks said `each_run`; other warnings (runs of days or apps,
    many alike) counted and said once at the end with what the first run they warned found."""

    def __init__(self, *, each_run: Collection[str] = (), unsaid: Collection[str] = ()) -> None:
        self.each_run, self.unsaid = each_run, unsaid
        self.warned: Counter[str] = Counter()
        self.found: dict[str, str] = {}

    def add(self, outcome: RunOutcome, say: Callable[[str], None]) -> None:
        """The run's warnings and failed checks (`say`: a line above any progress display)."""
        for warning in outcome.warnings:
            say(f"[yellow]{escape(outcome.label)}: {escape(warning)}")
        for check in outcome.failed_checks:
            name = check.rsplit(" (", 1)[0]
            if name in self.unsaid:
                continue
            detail = outcome.found_by_checks.get(name, "")
            warns = "(WARN)" in check
            if warns and name not in self.each_run:
                self.warned[name] += 1
                self.found.setdefault(name, detail)
            else:
                said = f": {escape(detail)}" if detail else ""
                what = "[yellow]warning for" if warns else "[red]check failed for"
                say(f"{what} {escape(outcome.label)}: {escape(check)}{said}")

    def say_warnings(self, runs: int, noun: str = "run") -> None:
        """Each summarised warning: in how many of the `runs` (`noun`s), and the first one's finding."""
        for check, count in sorted(self.warned.items()):
            detail = f" ({escape(self.found[check])})" if self.found[check] else ""
            console.print(f"[yellow]warning: {escape(check)} in {count} of {runs} {noun}s{detail}.")


def _say_rejected(rejects: int) -> None:
    if rejects:
        console.print(
            f"[yellow]{counted(rejects, 'object')} rejected: "
            "`ces-pipeline query rejects` lists them with the reason."
        )


def chosen_apps(chosen: Sequence[str], known: Sequence[str], where: str) -> list[str]:
    """`--app` values as full resource names, checked as CES_APPS is: an app id (`support-bot`)
    stands for the one app `where` (of CES_APPS, in the raw lake: `known`) whose name ends with it."""
    apps = []
    for app in chosen:
        matches = [app] if "/" in app else apps_named(app, known)
        if not matches:
            listed = ", ".join(known) or "none"
            raise UsageError(
                f"--app {app} is the id of no app {where} ({listed}): give an app's id or full name"
            )
        if len(matches) > 1:
            raise UsageError(
                f"--app {app}: {', '.join(matches)} {where} all have this id: give a full resource name"
            )
        apps.append(matches[0])
    CesSettings(apps=tuple(apps))
    return apps


def _apps(settings: Settings, chosen: Sequence[str] | None) -> list[str]:
    apps = chosen_apps(chosen, settings.ces.apps, "of CES_APPS") if chosen else list(settings.ces.apps)
    if not apps:
        raise UsageError(
            "CES_APPS is not set: name the apps to ingest, e.g. "
            "export CES_APPS=projects/my-project/locations/us/apps/my-app"
        )
    return apps


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.orchestration.partitions import plan_runs

    apps = _apps(settings, args.app)
    if args.since is None:
        ranges = _refresh(settings, apps, args.until)
    else:
        days = _window(settings, args.since, args.until)
        ranges = plan_runs([(app, day) for day in days for app in apps], settings.orchestration.days_per_run)
    conversations = load_conversations(settings, "ingest", ranges, quiet=args.quiet)
    evaluations = 0 if args.skip_evaluations else load_evaluations(settings, apps, quiet=args.quiet)
    return max(conversations, evaluations)


def cmd_rebuild(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.ingest.evaluations import EVALUATION_RUNS_DATASET
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake
    from pipelines.orchestration.partitions import plan_runs

    lake = Lake(settings.storage.lake)
    chosen: list[str] = []
    if args.app:
        known: set[str] = set()
        if any("/" not in app for app in args.app):  # an id: the lake's apps are listed to find it
            known = {app for app, _ in lake.raw_partitions(CONVERSATIONS_DATASET)}
            known |= {app for app, _ in lake.observations(EVALUATION_RUNS_DATASET)}
        chosen = chosen_apps(args.app, sorted(known), "in the raw lake")
    kept = lake.raw_partitions(CONVERSATIONS_DATASET, chosen)
    since = args.since or min((day for _, day in kept), default=None)
    until = args.until or max((day + timedelta(days=1) for _, day in kept), default=None)
    # Both bounds given are checked as `ingest` checks them; a bound left out may fall before the
    # other (an empty lake, --since after its last day): a window that holds nothing.
    holds_days = (args.since and args.until) or (since and until and since < until)
    days = set(_window(settings, since, until)) if holds_days else set()
    partitions = [(app, day) for app, day in kept if day in days]
    code = 0
    if partitions:
        ranges = plan_runs(partitions, settings.orchestration.days_per_run)
        code = load_conversations(settings, "rebuild", ranges, quiet=args.quiet)
    else:
        window = " ".join(
            f"--{name} {day}" for name, day in (("since", args.since), ("until", args.until)) if day
        )
        console.print(
            f"[yellow]nothing to rebuild: no raw conversation pages in {escape(lake.root)}"
            + (f" ({window})." if window else ".")
        )
    if args.skip_evaluations:
        return code
    apps = sorted(
        {app for app, _ in lake.observations(EVALUATION_RUNS_DATASET) if not chosen or app in chosen}
    )
    if not apps:
        console.print(f"[yellow]no evaluation run fetches to replay in {escape(lake.root)}.")
        return code
    from pipelines.orchestration.evaluation_assets import REPLAY_RUN_CONFIG

    replay = REPLAY_RUN_CONFIG.to_config_dict()
    return max(code, load_evaluations(settings, apps, replay, replay=True, quiet=args.quiet))
