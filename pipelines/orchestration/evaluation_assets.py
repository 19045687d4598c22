"""Evaluation run assets: fetch every run of each app (raw observation), then load it.

A sensor re-fetches runs still QUEUED or RUNNING until they finish; a job starts new runs.
"""

from collections import Counter
from collections.abc import Iterator

import dagster as dg
from pydantic import Field

from pipelines.ingest.evaluations import fetch_evaluation_runs, load_observation_file
from pipelines.ingest.trigger import start_evaluation
from pipelines.orchestration.partitions import CES_API_POOL, WAREHOUSE_POOL
from pipelines.orchestration.resources import CesResource, LakeResource, WarehouseResource
from pipelines.transform.schemas import (
    EVALUATION_RESULTS,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_TABLES,
    REJECTS,
)
from pipelines.warehouse.lock import WarehouseBusyError

GROUP = "evaluations"
RAW_EVALUATION_RUNS = dg.AssetKey(["raw", "evaluation_runs"])
EVALUATION_OUTPUT_TABLES = (*EVALUATION_RUN_TABLES, EVALUATION_RUN_SNAPSHOTS, EVALUATION_RESULTS)


class EvaluationRunsConfig(dg.Config):
    """Which runs to fetch: every run of each app (`discover`), plus `names`."""

    names: list[str] = Field(default_factory=list)
    discover: bool = True


@dg.asset(
    key=RAW_EVALUATION_RUNS,
    group_name=GROUP,
    pool=CES_API_POOL,
    kinds={"python"},
    description="Each fetch of the apps' evaluation runs and results, as received (a file per fetch).",
)
def evaluation_run_observations(
    context: dg.AssetExecutionContext, config: EvaluationRunsConfig, ces: CesResource, lake: LakeResource
) -> dg.MaterializeResult:
    settings = ces.settings()
    names = list(dict.fromkeys([*settings.evaluation_runs, *config.names]))
    apps = list(dict.fromkeys([*settings.apps, *(name.split("/evaluationRuns/")[0] for name in names)]))
    if not apps:
        raise dg.Failure("CES_APPS is not set and no evaluation run was named: nothing to fetch.")
    files: list[list[str]] = []
    totals: Counter[str] = Counter()
    with ces.client() as client:
        for app in apps:
            result = fetch_evaluation_runs(
                client,
                lake.lake(),
                app,
                names=[name for name in names if name.startswith(f"{app}/")],
                discover=config.discover,
                page_size=settings.page_size,
            )
            files.append([app, result.path])
            totals.update(runs=result.runs, results=result.results, records=result.records)
            context.log.info(f"{app}: {result.runs} evaluation runs, {result.results} results")
        stats = client.stats
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": totals["records"],
            "evaluation_runs": totals["runs"],
            "evaluation_results": totals["results"],
            "observation_files": dg.MetadataValue.json(files),
            "requests": stats.requests,
            "api_seconds": round(stats.api_seconds, 3),
        }
    )


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            ["warehouse", spec.name],
            deps=[RAW_EVALUATION_RUNS],
            group_name=GROUP,
            kinds={"duckdb"},
            description=spec.description,
        )
        for spec in EVALUATION_OUTPUT_TABLES
    ],
    pool=WAREHOUSE_POOL,
    name="warehouse_evaluation_tables",
)
def warehouse_evaluation_tables(
    context: dg.AssetExecutionContext, lake: LakeResource, warehouse: WarehouseResource
) -> Iterator[dg.MaterializeResult]:
    """Load the observation files of the latest fetch into the evaluation tables."""
    event = context.instance.get_latest_materialization_event(RAW_EVALUATION_RUNS)
    if event is None or event.asset_materialization is None:
        raise dg.Failure("no evaluation run fetch to load yet: materialize raw/evaluation_runs first")
    files = event.asset_materialization.metadata["observation_files"].value
    rows: Counter[str] = Counter()
    for app, path in files:
        rows.update(load_observation_file(lake.lake(), warehouse.warehouse(), app, path))
    context.log.info(f"loaded {dict(rows)}")
    for spec in EVALUATION_OUTPUT_TABLES:
        yield dg.MaterializeResult(
            asset_key=["warehouse", spec.name], metadata={"dagster/row_count": rows[spec.name]}
        )
    if rows[REJECTS.name]:
        context.log.warning(f"{rows[REJECTS.name]} evaluation objects rejected: see the rejects table")


EVALUATION_ASSETS = [evaluation_run_observations, warehouse_evaluation_tables]

ingest_evaluation_runs_job = dg.define_asset_job(
    "ingest_evaluation_runs",
    selection=dg.AssetSelection.assets(*EVALUATION_ASSETS),
    description="Fetch every evaluation run (and result) of the configured apps and load them.",
)


@dg.sensor(
    job=ingest_evaluation_runs_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING
)
def unfinished_evaluation_runs_sensor(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    """Re-fetch runs still QUEUED or RUNNING until they finish. Small and fast: one query a tick."""
    try:
        unfinished = warehouse.warehouse().unfinished_evaluation_runs()
    except WarehouseBusyError as exc:
        return dg.SkipReason(f"warehouse busy, trying again next tick: {exc}")
    if not unfinished:
        return dg.SkipReason("no evaluation run is queued or running")
    names = sorted(name for _, name in unfinished)
    in_flight = context.instance.get_run_records(
        dg.RunsFilter(
            job_name=ingest_evaluation_runs_job.name,
            statuses=[dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED],
        ),
        limit=1,
    )
    if in_flight:
        return dg.SkipReason("an evaluation run fetch is already in progress")
    config = EvaluationRunsConfig(names=names, discover=False)
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(
                run_config=dg.RunConfig(ops={"raw__evaluation_runs": config}),
                tags={"ces/evaluation_runs": str(len(names))},
            )
        ]
    )


class StartEvaluationConfig(dg.Config):
    """What `run_evaluation` should run: `evaluations` or `evaluation_dataset` of `app`."""

    app: str
    evaluations: list[str] = Field(default_factory=list)
    evaluation_dataset: str | None = None
    display_name: str | None = None
    app_version: str | None = None


@dg.op(pool=CES_API_POOL)
def start_evaluation_op(
    context: dg.OpExecutionContext, config: StartEvaluationConfig, ces: CesResource, lake: LakeResource
) -> str:
    """Start one evaluation run and wait for its operation; returns the run's name."""
    with ces.client() as client:
        started = start_evaluation(
            client,
            lake.lake(),
            config.app,
            evaluations=config.evaluations or None,
            evaluation_dataset=config.evaluation_dataset,
            display_name=config.display_name,
            app_version=config.app_version,
            on_operation=lambda name: context.log.info(f"run_evaluation started operation {name}"),
        )
    context.log.info(f"evaluation run {started.evaluation_run} created after {started.polls} polls")
    return started.evaluation_run


@dg.job(description="Start an evaluation run with run_evaluation (never retried automatically).")
def start_evaluation_job() -> None:
    start_evaluation_op()
