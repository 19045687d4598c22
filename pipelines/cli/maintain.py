"""`maintain`: the daily upkeep a daemon's schedules do, for a deployment without one (cron):
Dagster's records of old runs that later runs redid deleted, and a DuckLake's snapshots expired
and files merged. Each a Dagster run of the instance, as every load is, said in a line."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.markup import escape

from pipelines.cli.common import console, counted
from pipelines.cli.loads import execute
from pipelines.config import Settings

if TYPE_CHECKING:
    from pipelines.orchestration.runs import RunOutcome


def _retention(outcome: RunOutcome, keep_days: int) -> str:
    deleted, kept = (
        outcome.value("run_retention_op", "deleted_runs"),
        outcome.value("run_retention_op", "kept_runs"),
    )
    return (
        f"Dagster's records: {counted(deleted, 'run')} older than {keep_days} days whose work later runs "
        f"redid deleted, {kept} kept (each holds a partition's latest materialization)"
    )


def _lake(outcome: RunOutcome) -> str:
    def change(name: str) -> str:
        before, after = (
            outcome.value("warehouse_maintenance_op", f"{name} {when}") for when in ("before", "after")
        )
        return f"{name.replace('_', ' ')} {before} → {after}"

    return "DuckLake warehouse: " + ", ".join(
        change(name) for name in ("snapshots", "data_files", "delete_files")
    )


def cmd_maintain(args: argparse.Namespace, settings: Settings) -> int:
    """Run the retention job (and, on a DuckLake, the maintenance job), a line each (`--quiet`:
    only a failure, for cron, which mails what a command prints)."""
    from pipelines.orchestration.runs import PlannedRun
    from pipelines.warehouse.ducklake import is_ducklake

    keep_days = settings.orchestration.run_retention_days
    config = {
        "ops": {"run_retention_op": {"config": {"keep_days": keep_days, "examine_days": args.examine_days}}}
    }
    jobs = [("run_retention_job", config, lambda outcome: _retention(outcome, keep_days))]
    if is_ducklake(settings.storage.warehouse):
        jobs.append(("warehouse_maintenance_job", None, _lake))
    failed = 0
    for job_name, run_config, said in jobs:
        (outcome,) = execute(settings, job_name, [PlannedRun(job_name, {}, 0)], [], run_config=run_config)
        if not outcome.success:
            failed += 1
            console.print(f"[red]✗ {escape(job_name)}: {escape(str(outcome.error))}", soft_wrap=True)
        elif not args.quiet:
            console.print(escape(said(outcome)), soft_wrap=True)
    return 1 if failed else 0
