"""`maintain`: the daily upkeep a daemon's schedules do, for a deployment without one (cron):
Dagster's records of old runs that later runs redid deleted, and a DuckLake's snapshots expired
and files merged. Each a Dagster run of the instance, as every load is, said in a line: the
summary its op logs."""

from __future__ import annotations

import argparse

from rich.markup import escape

from pipelines.cli.common import console
from pipelines.cli.loads import execute
from pipelines.config import Settings

_SAID = {
    "run_retention_job": ("Dagster's records", "run_retention_op"),
    "warehouse_maintenance_job": ("DuckLake warehouse", "warehouse_maintenance_op"),
}
"""How each job's line starts, and the op whose `summary` it says."""


def cmd_maintain(args: argparse.Namespace, settings: Settings) -> int:
    """Run the retention job (and, on a DuckLake, the maintenance job), a line each (`--quiet`:
    only a failure, for cron, which mails what a command prints)."""
    from pipelines.orchestration.runs import PlannedRun
    from pipelines.warehouse.ducklake import is_ducklake

    retention = {"keep_days": settings.orchestration.run_retention_days, "examine_days": args.examine_days}
    jobs = {"run_retention_job": {"ops": {"run_retention_op": {"config": retention}}}}
    if is_ducklake(settings.storage.warehouse):
        jobs["warehouse_maintenance_job"] = {}
    failed = 0
    for job_name, run_config in jobs.items():
        (outcome,) = execute(settings, job_name, [PlannedRun(job_name, {}, 0)], [], run_config=run_config)
        what, step = _SAID[job_name]
        if not outcome.success:
            failed += 1
            console.print(f"[red]✗ {what}: {escape(str(outcome.error))}", soft_wrap=True)
        elif not args.quiet:
            console.print(f"{what}: {escape(outcome.value(step, 'summary'))}", soft_wrap=True)
    return 1 if failed else 0
