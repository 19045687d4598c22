"""`evaluate`: an evaluation run started in CES through a Dagster run, followed to its end
(`--gate`), loaded, and judged against the previous run of the same evaluations."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.markup import escape

from pipelines.cli.common import console, counted, out
from pipelines.cli.loads import chosen_apps, execute, load_evaluations
from pipelines.config import Settings
from pipelines.errors import ActionableError, UsageError

if TYPE_CHECKING:
    import duckdb

START_STEP = "start_evaluation_op"


def _run_before(settings: Settings, app: str) -> str:
    """What earlier runs of `app` covered, as options to give, for an error about what to run."""
    from pipelines.warehouse.duck import Warehouse
    from pipelines.warehouse.stored import evaluations_run_before

    try:
        found = evaluations_run_before(Warehouse.from_settings(settings.storage), app)
    except ActionableError:  # a warehouse that cannot be read now: the error this joins stands alone
        return ""
    said = "; ".join(f"{option} {', '.join(ids)}" for option, ids in found.items())
    return f" (this app's runs in the warehouse covered: {said})" if said else ""


def cmd_evaluate(args: argparse.Namespace, settings: Settings) -> int:
    """A run of `start_evaluation_job` starts the evaluation (`run_evaluation`, sent once), then
    its evaluation run is followed to its end (`--gate`) and loaded."""
    from pipelines.orchestration.checks import GATE_CHECK
    from pipelines.orchestration.runs import PlannedRun

    (app,) = chosen_apps([args.app], settings.ces.apps, "of CES_APPS")
    evaluations = [e.strip() for e in (args.evaluations or "").split(",") if e.strip()]
    if bool(evaluations) == bool(args.dataset):
        raise UsageError(f"give exactly one of --evaluations a,b or --dataset D{_run_before(settings, app)}")
    start = {"app": app, "evaluations": evaluations, "evaluation_dataset": args.dataset}
    start |= {key: getattr(args, key) for key in ("display_name", "app_version", "poll_seconds")}
    with console.status("waiting for the evaluation to start"):
        run_config = {"ops": {START_STEP: {"config": start}}}
        (started,) = execute(
            settings, "start_evaluation_job", [PlannedRun(app, {}, 1)], [app], run_config=run_config
        )
    operation = started.value(START_STEP, "operation", None)
    if not started.success:
        error = str(started.error).removeprefix(f"{START_STEP}: ")
        known = _run_before(settings, app) if "NOT_FOUND" in error else ""
        console.print(f"[red]error: {escape(error + known)}")
        if operation:
            console.print(f"Follow it up with get_operation {operation}; do not re-run blindly.")
        return 1
    run = started.value(START_STEP, "evaluation_run")
    try:  # from here, what Ctrl-C leaves is a run CES goes on with, not loaded yet
        out.print(f"operation {operation}")
        out.print(f"evaluation run {run}")
        # following it may fail: an error of its own (exit code 1)
        state = _follow(settings, run, args.poll_seconds) if args.gate else None
    except KeyboardInterrupt:
        raise KeyboardInterrupt(
            f"interrupted: {run} goes on in CES, not loaded; "
            "the next `ces-pipeline ingest` of its app loads it"
        ) from None
    config = {"ops": {"raw__evaluation_runs": {"config": {"names": [run], "discover": False}}}}
    code = load_evaluations(settings, [app], config, unsaid=[GATE_CHECK] if args.gate else ())  # said below
    if not args.gate:
        return code
    if state != "COMPLETED":
        console.print(f"[red]evaluation run ended {state}: no completed run to gate")
        return max(code, 1)
    return max(code, regression_gate(settings, app, run))


def _follow(settings: Settings, run: str, poll_seconds: float) -> str:
    """Poll the evaluation run to its end, showing its progress; its final state."""
    from pipelines.ces.client import CesMcpClient
    from pipelines.ingest.trigger import wait_for_evaluation_run

    said = ""

    def on_run(found: dict) -> None:
        nonlocal said
        now = f"evaluation run: {_progress(found)}"
        status.update(now)
        if not console.is_terminal and now != said:  # a log, CI: a line per change
            console.print(now)
        said = now

    with CesMcpClient(settings.ces) as client, console.status("following the evaluation run") as status:
        return wait_for_evaluation_run(client, run, poll_seconds=poll_seconds, on_run=on_run)


def _progress(run: dict) -> str:
    progress = run.get("progress") or {}
    done, total = progress.get("completedCount", 0), progress.get("totalCount", 0)
    return f"{run.get('state', '?')}, {done} of {total} results"


GATE_FAILED = 3
"""`evaluate --gate`'s exit code when the run regressed (1: a load failed; 2: a usage error)."""


def regression_gate(settings: Settings, app: str, run: str) -> int:
    """The regression gate on the warehouse, as the asset check judges it: 0 passed, 3 regressed."""
    from pipelines.orchestration.checks import describe_change, gated_rows
    from pipelines.orchestration.resources import RegressionGateResource
    from pipelines.warehouse.duck import Warehouse

    params = RegressionGateResource.from_settings(settings.orchestration).query_params(app)
    with Warehouse.from_settings(settings.storage).connect(read_only=True) as conn:
        compared = [row for row in gated_rows(conn, {**params, "status": None}) if row["latest_run"] == run]
        regressed = [row for row in compared if row["status"] == "regressed"]
        failed = _failed_results(conn, run) if regressed else 0
    if not compared:
        console.print(
            f"[green]regression gate passed: no earlier completed run of the same evaluations as {run}",
            soft_wrap=True,
        )
        return 0
    previous = compared[0]["previous_run"]
    if not regressed:
        console.print(f"[green]regression gate passed: {run} is no worse than {previous}", soft_wrap=True)
        return 0
    console.print(f"[red]regression gate failed: {run} against {previous}:", soft_wrap=True)
    for row in regressed:
        console.print(f"  {escape(describe_change(row))}", soft_wrap=True)
    if failed:
        console.print(
            f"{counted(failed, 'result')} failed: ces-pipeline query evaluation_failures --param run={run} "
            "(with the turn each failed in, once an ingest has loaded the run's conversations)",
            soft_wrap=True,
            markup=False,
        )
    return GATE_FAILED


def _failed_results(conn: duckdb.DuckDBPyConnection, run: str) -> int:
    """How many results of `run` failed, as `evaluation_failures` lists them."""
    from pipelines.warehouse.queries import named_query

    columns, failures = named_query("evaluation_failures").execute(conn, {"run": run})
    return len({failure[columns.index("evaluation_result_name")] for failure in failures})
