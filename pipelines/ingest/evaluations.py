"""Evaluation runs: each fetch is a raw observation file, kept (progress replays); the latest loads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pipelines.ces.client import CesMcpClient
from pipelines.ces.daemon_threads import ordered_map
from pipelines.ces.errors import CesError
from pipelines.ces.paging import fetch_record, not_found, page_items
from pipelines.ces.records import ApiRecord, as_record
from pipelines.ces.tools import (
    GET_EVALUATION_RUN,
    GET_OPERATION,
    LIST_EVALUATION_RESULTS,
    LIST_EVALUATION_RUNS,
    iter_evaluation_result_records,
    iter_evaluation_run_records,
)
from pipelines.lake.store import Lake
from pipelines.protojson.enums import enum_name
from pipelines.protojson.timeparse import TimeFormatError, parse_timestamp_micros
from pipelines.protojson.violations import SchemaViolation
from pipelines.resource_names import name_of
from pipelines.transform.evaluation_results import EvaluationResultFlattener
from pipelines.transform.evaluations import (
    EvaluationOperationFlattener,
    EvaluationRunFlattener,
)
from pipelines.transform.rejects import Reject, rejects_batch
from pipelines.transform.schemas import REFUSED_RUN, RUN_REJECT_SOURCE
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.loads import upsert_evaluations

EVALUATION_RUNS_DATASET = "evaluation_runs"
STARTED_RUNS_STATE = "started_evaluation_runs"
FINAL_RUN_STATES = frozenset({"COMPLETED", "ERROR", "CANCELLED"})


@dataclass
class EvaluationFetchResult:
    path: str = ""
    runs: int = 0
    results: int = 0
    operations: int = 0
    operations_unavailable: list[str] = field(default_factory=list)
    """Operations get_operation refused (e.g. expired): their runs' durations stay unknown."""
    runs_already_final: int = 0
    """Runs stored in a final state with their results, not fetched again."""
    runs_refused: list[str] = field(default_factory=list)
    """Runs CES says do not exist (NOT_FOUND: deleted since they were seen), with its words:
    recorded as rejects and no longer followed; the app's other runs load."""
    records: int = 0


def fetch_evaluation_runs(
    client: CesMcpClient,
    lake: Lake,
    app: str,
    *,
    names: Sequence[str] = (),
    discover: bool = True,
    finished_runs: Collection[str] = (),
    finished_operations: Collection[str] = (),
    unfinished_runs: Collection[str] = (),
    newest_created: datetime | None = None,
    page_size: int = 100,
    workers: int = 4,
) -> EvaluationFetchResult:
    """Fetch runs (listed if `discover`, `names`, started here), results, `workers` at a time, to a file.

    A fetch costs the runs that can have changed, not the app's history: a run in `finished_runs`
    (stored in a final state, with its results) is neither fetched again nor its results listed,
    unless it is one of `names`. The operation of each final run is fetched once, for its create
    and end times: operations in `finished_operations` (already stored as done) cost no call.
    Discovery lists the runs newest first and stops `LISTING_MARGIN` before `newest_created` (when
    the newest stored run was created): an older run can only change while unfinished, and the
    stored `unfinished_runs` are fetched by name. A server that does not list newest first is
    listed to the end."""
    result = EvaluationFetchResult()
    prefix = f"{app}/evaluationRuns/"
    # Runs `evaluate` started (run → operation): fetched until stored final or gone, then settled:
    # their records kept in `done/`, no longer read.
    started_here: dict[str, str] = {}
    for doc in lake.read_states(STARTED_RUNS_STATE):
        run, operation = doc.get("evaluation_run"), doc.get("operation")
        if doc.get("app") != app or not isinstance(run, str) or not isinstance(operation, str):
            continue
        if run in finished_runs:
            lake.settle_state(STARTED_RUNS_STATE, operation)
        else:
            started_here[run] = operation

    def records() -> Iterator[dict[str, Any]]:
        discovered: list[str] = []
        if discover and client.has_tool(LIST_EVALUATION_RUNS):
            since = None if newest_created is None else (newest_created - LISTING_MARGIN).timestamp()
            listing = NewestFirst(None if since is None else int(since * 1_000_000))
            for page in iter_evaluation_run_records(client, app, page_size=page_size):
                yield page.to_dict()
                listed = page_items(page.result, "evaluationRuns", LIST_EVALUATION_RUNS)
                discovered.extend(name for name in map(name_of, listed) if name is not None)
                if listing.reached_the_known(listed):
                    break
            discovered.extend(unfinished_runs)
        known = [
            name for name in dict.fromkeys([*discovered, *names, *started_here]) if name.startswith(prefix)
        ]
        asked = set(names)
        wanted = [name for name in known if name in asked or name not in finished_runs]
        result.runs_already_final = len(known) - len(wanted)
        runs = ordered_map(
            lambda name: fetch_record(client, GET_EVALUATION_RUN, {"name": name}, keep=not_found),
            wanted,
            workers=workers,
            thread_name_prefix="ces-eval",
        )
        operations: list[str] = []
        gone: set[str] = set()
        for record in runs:
            if record.refused is not None:
                name = record.arguments["name"]
                gone.add(name)
                if name in started_here:
                    lake.settle_state(STARTED_RUNS_STATE, started_here[name])
                result.runs_refused.append(f"{name}: {record.refused}")
                yield record.to_dict()
                continue
            result.runs += 1
            operation = record.result.get("operation")
            if run_state(record.result) in FINAL_RUN_STATES and isinstance(operation, str) and operation:
                operations.append(operation)
            yield record.to_dict()
        if client.has_tool(GET_OPERATION):
            wanted_operations = [name for name in operations if name not in finished_operations]
            fetches = ordered_map(
                lambda name: fetch_record(client, GET_OPERATION, {"name": name}, keep=_any),
                wanted_operations,
                workers=workers,
                thread_name_prefix="ces-eval-op",
            )
            for fetched in fetches:  # a run's missing duration never costs the rest of the fetch
                if fetched.refused is not None:
                    result.operations_unavailable.append(f"{fetched.arguments['name']}: {fetched.refused}")
                else:
                    result.operations += 1
                    yield fetched.to_dict()
        if client.has_tool(LIST_EVALUATION_RESULTS):
            listed: set[str] = set()  # a listing restarted after a refused page token repeats some
            listings = ordered_map(
                lambda name: list(iter_evaluation_result_records(client, app, name, page_size=page_size)),
                [name for name in wanted if name not in gone],
                workers=workers,
                thread_name_prefix="ces-eval-results",
            )
            for pages in listings:
                for page in pages:
                    items = page_items(page.result, "evaluationResults", LIST_EVALUATION_RESULTS)
                    listed.update(name_of(item) or repr(item) for item in items)
                    result.results = len(listed)
                    yield page.to_dict()

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")  # sortable and path-safe, names the fetch
    written = lake.write_observation(EVALUATION_RUNS_DATASET, app, stamp, records())
    result.path, result.records = written.path, written.rows
    return result


LISTING_MARGIN = timedelta(days=1)
"""How far before the newest stored run's creation a discovery lists: a run a server shows late."""


@dataclass
class NewestFirst:
    """Follows a listing of runs asked newest first (`create_time desc`): whether it has reached
    the runs created before `since` (UNIX microseconds), which it need not list. Never, when
    `since` is None or a run came out of order or without a creation time: then the server is
    listed to the end."""

    since: int | None
    _previous: int | None = None

    def reached_the_known(self, runs: Iterable[Any]) -> bool:
        for run in runs:
            try:
                created = parse_timestamp_micros(run["createTime"])
            except (KeyError, TypeError, TimeFormatError):
                self.since = None
                return False
            if self._previous is not None and created > self._previous:
                self.since = None  # not newest first: no page says where the known runs begin
            self._previous = created
        return self.since is not None and self._previous is not None and self._previous < self.since


def _any(refusal: CesError) -> bool:
    """Any refusal of an operation (they expire): a run's duration is not worth the fetch."""
    return True


def run_state(run: Mapping[str, Any]) -> str | None:
    """An EvaluationRun's state by name (sent as a name or a number); None when absent or malformed."""
    try:
        return enum_name(run.get("state"), "EvaluationRun.EvaluationRunState", "state")
    except SchemaViolation:
        return None


@dataclass
class EvaluationObservation:
    """What one fetch saw: each run once (full when fetched) with when, the results, and operations."""

    runs: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    operations: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    refused: list[ApiRecord] = field(default_factory=list)
    """Its get_evaluation_run calls the server refused (the run is gone)."""


def replay_evaluation_records(records: Iterable[ApiRecord | Mapping[str, Any]]) -> EvaluationObservation:
    """Pure: the runs of one observation file as fetched in full, with their results. A listed
    run the fetch did not get again is stored in a final state: left as it is, results and all
    (an unnamed one, which no get can fetch, is kept for its reject)."""
    runs: dict[str, tuple[Any, int]] = {}
    results: dict[str, Any] = {}
    operations: list[tuple[Any, int]] = []
    unnamed: list[tuple[Any, int]] = []
    refused: list[ApiRecord] = []
    for raw in records:
        record = as_record(raw)
        observed = parse_timestamp_micros(record.fetched_at) if record.fetched_at else 0
        if record.tool == LIST_EVALUATION_RUNS:
            listed = page_items(record.result, "evaluationRuns", LIST_EVALUATION_RUNS)
            unnamed += [(run, observed) for run in listed if name_of(run) is None]
        elif record.tool == GET_EVALUATION_RUN and record.refused is not None:
            refused.append(record)
        elif record.tool == GET_EVALUATION_RUN:
            runs[str(record.arguments.get("name"))] = (record.result, observed)
        elif record.tool == LIST_EVALUATION_RESULTS:
            for item in page_items(record.result, "evaluationResults", LIST_EVALUATION_RESULTS):
                key = name_of(item)
                results[key if key is not None else f"#{len(results)}"] = item
        elif record.tool == GET_OPERATION:
            operations.append((record.result, observed))
    return EvaluationObservation([*runs.values(), *unnamed], list(results.values()), operations, refused)


def load_evaluation_observation(
    warehouse: Warehouse, app: str, observation: EvaluationObservation, day: date
) -> dict[str, int]:
    runs = EvaluationRunFlattener()
    for run, observed in observation.runs:
        runs.add(run, observed)
    results = EvaluationResultFlattener()
    for item in observation.results:
        results.add(item)
    operations = EvaluationOperationFlattener()
    for operation, observed in observation.operations:
        operations.add(operation, observed)
    rejects = runs.take_rejects() + results.take_rejects() + operations.take_rejects()
    for record in observation.refused:
        name = str(record.arguments.get("name"))
        rejects.append(Reject(RUN_REJECT_SOURCE, name, f"{REFUSED_RUN}{record.refused}", record.to_dict()))
    batches = {**runs.take_batches(), **results.take_batches(), **operations.take_batches()}
    return upsert_evaluations(warehouse, app, day, batches, rejects_batch(rejects, app, day))


def load_observation_file(lake: Lake, warehouse: Warehouse, app: str, path: str) -> dict[str, int]:
    """Replay and load one observation file; its fetch day is the rejects' partition date."""
    stamp = path.rsplit("fetched=", 1)[1][:8]
    day = date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:8]))
    return load_evaluation_observation(warehouse, app, replay_evaluation_records(lake.read_jsonl(path)), day)


def replay_observations(lake: Lake, warehouse: Warehouse, app: str) -> tuple[int, dict[str, int]]:
    """Load `app`'s observation files, oldest first (idempotent: as the loads did); files, rows per table."""
    files, totals = 0, Counter[str]()
    for owner, path in lake.observations(EVALUATION_RUNS_DATASET):
        if owner == app:
            totals.update(load_observation_file(lake, warehouse, app, path))
            files += 1
    return files, dict(totals)
