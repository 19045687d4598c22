"""Evaluation run assets: fetch, load each app's runs; a sensor follows unfinished ones, a job starts one."""

import json
import time
from collections.abc import Iterator
from typing import Any

import dagster as dg
from pydantic import Field

from pipelines.ingest.evaluations import fetch_evaluation_runs, load_observation_file, replay_observations
from pipelines.ingest.trigger import EvaluationTriggerError, start_evaluation
from pipelines.orchestration.checks import EVALUATION_CHECK_SPECS, evaluation_check_results
from pipelines.orchestration.keys import (
    RAW_EVALUATION_RUNS,
    WAREHOUSE_EVALUATIONS,
    rows_metadata,
    stats_metadata,
)
from pipelines.orchestration.partitions import APP_PARTITIONS, CES_API_POOL, IN_FLIGHT, bounded
from pipelines.orchestration.resources import (
    CesResource,
    LakeResource,
    RegressionGateResource,
    WarehouseResource,
)
from pipelines.transform.schemas import EVALUATION_RUNS
from pipelines.warehouse import stored
from pipelines.warehouse.lock import WarehouseBusyError

GROUP = "evaluations"


class EvaluationRunsConfig(dg.Config):
    """Which runs to fetch: every run of each app (`discover`), plus `names`."""

    names: list[str] = Field(default_factory=list)
    discover: bool = True


@dg.asset(
    key=RAW_EVALUATION_RUNS,
    partitions_def=APP_PARTITIONS,
    group_name=GROUP,
    pool=CES_API_POOL,
    kinds={"python"},
    description="Each fetch of an app's evaluation runs and results, as received (a file per fetch).",
)
def evaluation_run_observations(
    context: dg.AssetExecutionContext,
    config: EvaluationRunsConfig,
    ces: CesResource,
    lake: LakeResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    app = context.partition_key
    settings = ces.settings()
    names = [
        name
        for name in dict.fromkeys([*settings.evaluation_runs, *config.names])
        if name.startswith(f"{app}/")
    ]
    started = time.monotonic()
    with ces.client() as client:
        result = fetch_evaluation_runs(
            client,
            lake.lake(),
            app,
            names=names,
            discover=config.discover,
            **_stored_runs(warehouse, app),
            page_size=settings.page_size,
        )
        stats = client.stats
    context.log.info(
        f"{app}: {result.runs} evaluation runs, {result.results} results, {result.operations} "
        f"operations, {stats.requests} requests ({result.runs_already_final} finished runs already "
        "stored, not fetched again)"
    )
    for refused in result.operations_unavailable:
        context.log.warning(f"get_operation refused, the run's duration stays unknown: {refused}")
    for refused in result.runs_refused:
        context.log.warning(f"get_evaluation_run refused, the run is no longer followed: {refused}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": result.records,
            "evaluation_runs": result.runs,
            "evaluation_runs_already_final": result.runs_already_final,
            "evaluation_results": result.results,
            "operations": result.operations,
            "operations_unavailable": len(result.operations_unavailable),
            "evaluation_runs_refused": len(result.runs_refused),
            "observation_file": result.path,
            **stats_metadata(stats),
            "elapsed_seconds": round(time.monotonic() - started, 3),
        }
    )


def _stored_runs(warehouse: WarehouseResource, app: str) -> dict[str, Any]:
    """What the warehouse holds of the app's runs, which a fetch need not ask for again
    (`stored.stored_runs`); nothing when the warehouse is busy: then every run is fetched."""
    try:
        return stored.stored_runs(warehouse.warehouse(), app)
    except WarehouseBusyError:
        return {}


class EvaluationLoadConfig(dg.Config):
    """`replay`: load every fetch of the app in the raw lake, oldest first (a rebuild), not the latest."""

    replay: bool = False


@dg.asset(
    key=WAREHOUSE_EVALUATIONS,
    deps=[RAW_EVALUATION_RUNS],
    check_specs=EVALUATION_CHECK_SPECS,
    partitions_def=APP_PARTITIONS,
    group_name=GROUP,
    kinds={"duckdb"},
    description="The evaluation tables of the warehouse (runs, summaries, latencies, personas, "
    "evaluations, results, errors, snapshots) and their rejects.",
)
def warehouse_evaluation_tables(
    context: dg.AssetExecutionContext,
    config: EvaluationLoadConfig,
    lake: LakeResource,
    warehouse: WarehouseResource,
    regression_gate: RegressionGateResource,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    app = context.partition_key
    if config.replay:
        files, rows = replay_observations(lake.lake(), warehouse.warehouse(), app)
    else:
        files = 1
        rows = load_observation_file(lake.lake(), warehouse.warehouse(), app, _latest_fetch(context))
    context.log.info(f"{app}: loaded {files} evaluation run fetches: {rows}")
    metadata = {**rows_metadata(rows, EVALUATION_RUNS.name), "fetches_loaded": files}
    yield dg.MaterializeResult(metadata=metadata)
    store = warehouse.warehouse()
    with store.connect(read_only=True) as conn:
        yield from evaluation_check_results(
            conn, app, regression_gate.query_params(app), regression_gate.severity, store.scoped_parts_root
        )


def _latest_fetch(context: dg.AssetExecutionContext) -> str:
    """The observation file of the partition's latest `raw/evaluation_runs` materialization."""
    app = context.partition_key
    latest = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=RAW_EVALUATION_RUNS, asset_partitions=[app]), limit=1, ascending=False
    ).records
    if not latest or latest[0].asset_materialization is None:
        raise dg.Failure(f"no evaluation run fetch of {app} to load: materialize raw/evaluation_runs first")
    return latest[0].asset_materialization.metadata["observation_file"].value


ingest_evaluation_runs_job = dg.define_asset_job(
    "ingest_evaluation_runs",
    selection=dg.AssetSelection.assets(evaluation_run_observations, warehouse_evaluation_tables),
    description="Fetch every evaluation run (and result) of the configured apps and load them.",
)

REPLAY_RUN_CONFIG = dg.RunConfig(ops={"warehouse__evaluation_tables": EvaluationLoadConfig(replay=True)})

rebuild_evaluation_runs_job = dg.define_asset_job(
    "rebuild_evaluation_runs",
    selection=dg.AssetSelection.assets(warehouse_evaluation_tables),
    config=REPLAY_RUN_CONFIG,
    description="Replay every evaluation run fetch kept in the raw lake into the warehouse (no API call).",
)


FOLLOW_TICK_SECONDS = 30
MAX_FOLLOW_WAIT_SECONDS = 1800.0


def follow_due(first_seen: float, last_fetch: float, now: float) -> bool:
    """Is the next fetch of an app's unfinished runs due (UNIX seconds; `first_seen`: when its
    newest unfinished run was first seen)? At every tick for five minutes, then once a tenth of
    the time it has been followed has passed, at most half an hour: a run stuck for days costs 48
    runs a day, not 2,880."""
    wait = min(MAX_FOLLOW_WAIT_SECONDS, (now - first_seen) / 10)
    return wait <= FOLLOW_TICK_SECONDS or now - last_fetch >= wait


@dg.sensor(
    job=ingest_evaluation_runs_job,
    minimum_interval_seconds=FOLLOW_TICK_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def unfinished_evaluation_runs_sensor(
    context: dg.SensorEvaluationContext, ces: CesResource, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    """Re-fetch the configured apps' unfinished runs: one run per app with some, no fetch in
    flight and its next fetch due (`follow_due`; the cursor holds when each unfinished run was
    first seen and each app last fetched). Only apps of `CES_APPS`: a warehouse loaded from another
    endpoint (the simulator's) must not start fetches that can only fail."""
    configured = set(ces.settings().apps)
    if not configured:
        return dg.SkipReason("CES_APPS is not set: no app's evaluation runs are followed")
    try:
        unfinished = [
            (app, name)
            for app, name in warehouse.warehouse().unfinished_evaluation_runs()
            if app in configured
        ]
    except WarehouseBusyError as exc:
        return dg.SkipReason(f"warehouse busy, trying again next tick: {exc}")
    if not unfinished:
        context.update_cursor(None)
        return dg.SkipReason("no evaluation run of the configured apps is unfinished")
    by_app: dict[str, list[str]] = {}
    for app, name in unfinished:
        by_app.setdefault(app, []).append(name)
    in_flight = {
        record.dagster_run.tags.get("dagster/partition")
        for record in context.instance.get_run_records(
            dg.RunsFilter(job_name=ingest_evaluation_runs_job.name, statuses=IN_FLIGHT)
        )
    }
    now, cursor = time.time(), json.loads(context.cursor or "{}")
    since = {name: cursor.get("since", {}).get(name, now) for _, name in unfinished}  # finished ones drop out
    fetched = {app: cursor.get("fetched", {}).get(app, 0.0) for app in by_app}
    due = [
        app
        for app in sorted(by_app)
        if app not in in_flight and follow_due(max(since[name] for name in by_app[app]), fetched[app], now)
    ]
    fetched |= dict.fromkeys(due, now)
    context.update_cursor(json.dumps({"since": since, "fetched": fetched}))
    requests = [
        dg.RunRequest(
            partition_key=app,
            run_config=dg.RunConfig(
                ops={"raw__evaluation_runs": EvaluationRunsConfig(names=sorted(by_app[app]), discover=False)}
            ),
            tags=bounded({"ces/unfinished_runs": str(len(by_app[app]))}),
        )
        for app in due
    ]
    if not requests:
        return dg.SkipReason(
            "every app with unfinished runs has a fetch in progress or its next one not yet due "
            "(runs unfinished for long are fetched less often)"
        )
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[APP_PARTITIONS.build_add_request(sorted(by_app))],
    )


class StartEvaluationConfig(dg.Config):
    """What `run_evaluation` should run: `evaluations` or `evaluation_dataset` of `app`; the
    seconds between two polls of its operation."""

    app: str
    evaluations: list[str] = Field(default_factory=list)
    evaluation_dataset: str | None = None
    display_name: str | None = None
    app_version: str | None = None
    poll_seconds: float = 2.0


@dg.op(pool=CES_API_POOL)
def start_evaluation_op(
    context: dg.OpExecutionContext, config: StartEvaluationConfig, ces: CesResource, lake: LakeResource
) -> dg.Output[str]:
    """Start one evaluation run (its operation polled until it names the run); returns the run's
    name. The operation is in the output's metadata, and in the failure's once it was named: a
    person follows it up rather than start another run."""
    try:
        with ces.client() as client:
            started = start_evaluation(
                client,
                lake.lake(),
                config.app,
                evaluations=config.evaluations or None,
                on_operation=lambda name: context.log.info(f"run_evaluation started operation {name}"),
                **config.model_dump(exclude={"app", "evaluations"}),
            )
    except EvaluationTriggerError as exc:
        raise dg.Failure(str(exc), metadata={"operation": exc.operation} if exc.operation else None) from exc
    named = {"operation": started.operation, "evaluation_run": started.evaluation_run, "polls": started.polls}
    return dg.Output(started.evaluation_run, metadata=named)


@dg.job(description="Start an evaluation run with run_evaluation (never retried automatically).")
def start_evaluation_job() -> None:
    start_evaluation_op()


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[start_evaluation_job],
    request_job=ingest_evaluation_runs_job,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="After start_evaluation_job succeeds, fetch and load the app's runs started here.",
)
def started_evaluation_sensor(context: dg.RunStatusSensorContext) -> dg.RunRequest:
    """Load a run as soon as `start_evaluation_job` created it (runs started here are always fetched)."""
    app = context.dagster_run.run_config["ops"]["start_evaluation_op"]["config"]["app"]
    return dg.RunRequest(
        run_key=context.dagster_run.run_id,
        partition_key=app,
        run_config=dg.RunConfig(ops={"raw__evaluation_runs": EvaluationRunsConfig(discover=False)}),
        tags=bounded(),
    )


DEFINITIONS = dg.Definitions(
    assets=[evaluation_run_observations, warehouse_evaluation_tables],
    jobs=[ingest_evaluation_runs_job, rebuild_evaluation_runs_job, start_evaluation_job],
    sensors=[unfinished_evaluation_runs_sensor, started_evaluation_sensor],
)
