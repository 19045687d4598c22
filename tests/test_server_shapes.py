"""What a real or hostile server may send, produced by the simulator on request (`--faults`), through
the real client over HTTP into the lake and the warehouse.

Legal shapes the corpus does not print by default (enum numbers, `null`, other offsets, MIME
base64, priming events, listings without traces) must end in exactly the rows of the plain
corpus; values of a later API version are kept as sent; a server that ignores the filter costs
requests, not rows; a broken one (endless empty pages, a drip, a huge body, a disabled API) is
stopped with an error that names the setting or the cause.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.cloud import ces_v1, ces_v1beta
from google.protobuf import json_format
from simulator_fixtures import McpHttp, strip_unpublished

from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesError
from pipelines.ces.ratelimit import RateLimiter
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.simulator.server.shapes import NEW_CHANNEL_TYPE, NEW_RUN_STATE
from pipelines.ces.tools import Listing
from pipelines.config import CesSettings
from pipelines.ingest.evaluations import fetch_evaluation_runs, load_observation_file
from pipelines.ingest.fetch import FetchResult, fetch_conversation_partition
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.transform.schemas import ALL_TABLES, EVALUATION_RUN_TABLES, TableSpec
from pipelines.warehouse.checks import run_check
from pipelines.warehouse.duck import Warehouse

SCALE = SimulatorScale(
    seed=3, apps=1, days=3, conversations_per_day=10, max_turns=3, evaluation_runs_per_app=6
)
DAYS = [SCALE.start_date + timedelta(days=i) for i in range(SCALE.days)]
APP = SCALE.app_names[0]
PAGE_SIZE = 4


def columns(spec: TableSpec) -> str:
    return "* EXCLUDE (observed_at)" if "observed_at" in spec.warehouse_schema.names else "*"


class Ingest:
    """One ingest of every day and the evaluation runs: the warehouse, the fetches, the client's counters."""

    def __init__(self, url: str, root: Path, **overrides: Any):
        values = {"timeout_seconds": 2.0, "retry_backoff_seconds": 0.01, "page_size": PAGE_SIZE, **overrides}
        self.lake = Lake(str(root / "lake"))
        self.warehouse = Warehouse(str(root / "warehouse.duckdb"))
        self.fetches: list[FetchResult] = []
        settings = CesSettings(mcp_url=url, **values)
        listing = Listing.from_settings(settings)
        with CesMcpClient(settings, rate_limiter=RateLimiter(1_000_000)) as client:
            for day in DAYS:
                self.fetches.append(fetch_conversation_partition(client, self.lake, APP, day, listing))
                flatten_conversation_partition(self.lake, APP, day)
            load_conversation_partitions(self.lake, self.warehouse, [(APP, day) for day in DAYS])
            fetched = fetch_evaluation_runs(client, self.lake, APP, page_size=PAGE_SIZE)
            load_observation_file(self.lake, self.warehouse, APP, fetched.path)
            self.stats = client.stats

    def rows(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table's rows, sorted; without `observed_at`, the instant of a fetch."""
        with self.warehouse.connect(read_only=True) as conn:
            return {
                spec.name: sorted(
                    conn.execute(f"SELECT {columns(spec)} FROM {spec.name}").fetchall(), key=repr
                )
                for spec in ALL_TABLES
            }

    def raw_text(self) -> str:
        """The tool results in the raw lake, as JSON text."""
        return "".join(
            orjson.dumps(record["result"]).decode()
            for day in DAYS
            for record in self.lake.read_jsonl(self.lake.raw_path(CONVERSATIONS_DATASET, APP, day))
        )

    def value(self, sql: str) -> Any:
        with self.warehouse.connect(read_only=True) as conn:
            return conn.execute(sql).fetchall()


def simulator(spec: str = "") -> Any:
    faults = SimulatedFaults(spec) if spec else None
    config = SimulatorConfig(
        scale=SCALE, faults=faults, page_size_default=PAGE_SIZE, page_size_max=PAGE_SIZE, summary_fraction=0.2
    )
    return faults, running_simulator(config)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Ingest:
    _, server = simulator()
    with server as sim:
        done = Ingest(sim.url, tmp_path_factory.mktemp("plain"))
    rows = done.rows()
    assert len(rows["conversations"]) == SCALE.conversation_count and rows["rejects"] == []
    assert rows["spans"] and rows["evaluation_runs"] and done.stats.retries == 0
    return done


WIRE_MARKS = {
    "enum-numbers": ('"inputTypes":[1', '"source":'),
    "null-fields": ('"text":null', '"endTime":null'),
    "lenient-formats": ("+05:30", "-08:00", "\\r\\n"),
    "loose-times": ("+0530", ":60."),
    "no-traces": (),
    "sse-priming": (),
}


@pytest.mark.parametrize("kind", list(WIRE_MARKS))
def test_legal_shapes_end_in_exactly_the_rows_of_the_plain_corpus(
    kind: str, plain: Ingest, tmp_path: Path
) -> None:
    faults, server = simulator(f"{kind}:0.5,seed=1")
    with server as sim:
        shaped = Ingest(sim.url, tmp_path)
    assert faults.injected[kind] > 0 and shaped.stats.retries == 0
    raw = shaped.raw_text()
    for mark in WIRE_MARKS[kind]:
        assert mark in raw, f"{mark!r} never sent"
    assert shaped.rows() == plain.rows()
    hydrated = sum(fetch.hydrated for fetch in shaped.fetches)
    if kind == "no-traces":
        # Each conversation listed without its spans was fetched in full, and counted.
        without = sum(fetch.without_traces for fetch in shaped.fetches)
        assert without == sum(fetch.without_traces for fetch in plain.fetches) + faults.injected["no-traces"]
        assert hydrated == sum(fetch.hydrated for fetch in plain.fetches) + faults.injected["no-traces"] > 0
    else:
        assert hydrated == sum(fetch.hydrated for fetch in plain.fetches)


def test_every_legal_shape_at_once_still_ends_in_the_same_rows(plain: Ingest, tmp_path: Path) -> None:
    faults, server = simulator("shapes:0.6,new-enums:0,sparse-ids:0,seed=2")
    with server as sim:
        shaped = Ingest(sim.url, tmp_path)
    assert {kind for kind, count in faults.injected.items() if count} == set(WIRE_MARKS)
    assert shaped.rows() == plain.rows()


def test_values_of_a_later_api_version_are_kept_as_sent(plain: Ingest, tmp_path: Path) -> None:
    _, server = simulator("new-enums:1")
    with server as sim:
        later = Ingest(sim.url, tmp_path)
    assert later.value("SELECT count(*) FROM rejects") == [(0,)]
    # Every conversation that has a channel type has the new one.
    assert later.value("SELECT DISTINCT channel_type FROM conversations WHERE channel_type IS NOT NULL") == [
        (NEW_CHANNEL_TYPE,)
    ]
    assert later.value("SELECT count(*) FROM conversations WHERE NOT list_contains(input_types, '12')") == [
        (0,)
    ]
    assert later.value("SELECT DISTINCT evaluation_type FROM evaluation_runs") == [("7",)]
    plain_states = dict(plain.value("SELECT evaluation_run_name, state FROM evaluation_runs"))
    later_states = dict(later.value("SELECT evaluation_run_name, state FROM evaluation_runs"))
    moving = {name for name, state in plain_states.items() if state in ("QUEUED", "RUNNING")}
    assert moving and {later_states[name] for name in moving} == {NEW_RUN_STATE}
    # A state this version does not know is unfinished: the runs are still followed.
    assert {name for _, name in later.warehouse.unfinished_evaluation_runs()} == moving
    assert {name: later_states[name] for name in plain_states if name not in moving} == {
        name: state for name, state in plain_states.items() if name not in moving
    }


def test_a_server_that_ignores_the_filter_costs_requests_not_rows(plain: Ingest, tmp_path: Path) -> None:
    _, server = simulator("ignore-filter:1")
    with server as sim:
        careless = Ingest(sim.url, tmp_path)
    assert careless.rows() == plain.rows()
    outside = [fetch.outside for fetch in careless.fetches]
    assert outside == [SCALE.conversation_count - SCALE.conversations_per_day] * SCALE.days
    assert sum(fetch.pages for fetch in careless.fetches) > sum(fetch.pages for fetch in plain.fetches)


def test_a_conversation_deleted_between_its_listing_and_its_fetch_is_a_reject(
    plain: Ingest, tmp_path: Path
) -> None:
    """get_conversation says NOT_FOUND for some listed conversations: the day still loads, each
    of them is a reject with CES's words, and every other conversation has the plain rows."""
    faults, server = simulator("deleted:0.3,seed=4")
    with server as sim:
        raced = Ingest(sim.url, tmp_path, hydrate="always")
    deleted = faults.injected["deleted"]
    rejects = dict(raced.value("SELECT resource_name, reason FROM rejects WHERE source = 'conversation'"))
    assert 0 < deleted == len(rejects) and raced.stats.retries == 0
    assert all(reason.startswith("get_conversation refused: NOT_FOUND: ") for reason in rejects.values())
    kept = [row for row in plain.rows()["conversations"] if row[0] not in rejects]
    assert raced.rows()["conversations"] == kept
    assert len(kept) == SCALE.conversation_count - deleted


def failure(spec: str, tmp_path: Path, **overrides: Any) -> tuple[SimulatedFaults, str]:
    faults, server = simulator(spec)
    with server as sim, pytest.raises(CesError) as raised:
        Ingest(sim.url, tmp_path, **overrides)
    return faults, str(raised.value)


def test_endless_empty_pages_stop_at_the_bound(tmp_path: Path) -> None:
    faults, message = failure("empty-forever:1", tmp_path, max_empty_pages=5)
    assert "CES_MAX_EMPTY_PAGES" in message and "5" in message
    assert faults.injected["empty-forever"] == 5  # five empty pages, then no more requests
    assert not Path(Lake(str(tmp_path / "lake")).raw_path(CONVERSATIONS_DATASET, APP, DAYS[0])).exists()


def test_a_dripping_server_meets_the_request_deadline(tmp_path: Path) -> None:
    faults, message = failure("drip:1,drip-bps=200", tmp_path, request_deadline_seconds=0.5, max_attempts=1)
    assert "CES_REQUEST_DEADLINE_SECONDS" in message
    assert faults.injected["drip"] == 1


def test_a_huge_body_is_refused_at_the_size_limit(tmp_path: Path) -> None:
    faults, message = failure("huge:1,huge-mb=40", tmp_path, max_response_mb=8, max_attempts=1)
    assert "CES_MAX_RESPONSE_MB" in message
    assert faults.injected["huge"] == 1


def test_a_disabled_api_fails_at_once_with_the_servers_reason(tmp_path: Path) -> None:
    faults, message = failure("403-disabled:1", tmp_path)
    assert "has not been used in this project" in message
    assert faults.injected["403-disabled"] == 1  # a permanent error: never retried


def served(url: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Everything the simulator serves of the app, by kind and name, as a plain HTTP caller gets it."""
    caller = McpHttp(url)
    listed = caller.all_items("list_conversations", "conversations", parent=APP, pageSize=PAGE_SIZE)
    out = {
        "listed": {c["name"]: strip_unpublished(c)[0] for c in listed},
        "fetched": {
            c["name"]: strip_unpublished(caller.call("get_conversation", name=c["name"]))[0] for c in listed
        },
        "runs": {
            r["name"]: r for r in caller.all_items("list_evaluation_runs", "evaluationRuns", parent=APP)
        },
        "results": {
            r["name"]: r
            for r in caller.all_items(
                "list_evaluation_results", "evaluationResults", parent=f"{APP}/evaluations/-"
            )
        },
    }
    caller.close()
    return out


PROTOS = {
    "listed": ces_v1.types.Conversation,
    "fetched": ces_v1.types.Conversation,
    "runs": ces_v1beta.types.EvaluationRun,
    "results": ces_v1beta.types.EvaluationResult,
}


def as_proto(kind: str, obj: dict[str, Any], *, ignore_unknown: bool = False) -> dict[str, Any]:
    """`obj` parsed by protobuf's JSON parser, printed back canonically."""
    message = PROTOS[kind].pb(PROTOS[kind]())
    json_format.ParseDict(obj, message, ignore_unknown_fields=ignore_unknown)
    return json_format.MessageToDict(message)


@pytest.fixture(scope="module")
def plain_served() -> dict[str, dict[str, dict[str, Any]]]:
    _, server = simulator()
    with server as sim:
        return served(sim.url)


@pytest.mark.parametrize(
    "shape", ["enum-numbers", "null-fields", "lenient-formats", "no-traces", "new-enums", "sparse-ids"]
)
def test_shaped_objects_parse_as_the_published_protos(shape: str, plain_served: dict[str, Any]) -> None:
    """Protobuf's strict parser reads every shaped object as the plain one (a later version's
    values aside, which a forward-compatible parser skips)."""
    faults, server = simulator(f"{shape}:1")
    with server as sim:
        shaped = served(sim.url)
    assert faults.injected[shape] > 0
    differ = 0
    for kind, objects in shaped.items():
        assert objects.keys() == plain_served[kind].keys()
        for name, obj in objects.items():
            parsed = as_proto(kind, obj, ignore_unknown=shape == "new-enums")
            expected = as_proto(kind, plain_served[kind][name])
            differ += parsed != expected
            if shape not in ("new-enums", "no-traces", "sparse-ids"):
                assert parsed == expected, name
    if shape == "no-traces":
        # Only the listing lost its traces; each conversation fetched in full has them.
        assert shaped["fetched"] == plain_served["fetched"]
        assert 0 < differ <= len(shaped["listed"])
    if shape in ("new-enums", "sparse-ids"):
        assert differ > 0


def test_toolset_tools_without_ids_keep_every_call_and_latency(plain: Ingest, tmp_path: Path) -> None:
    faults, server = simulator("sparse-ids:1")
    with server as sim:
        sparse = Ingest(sim.url, tmp_path)
    assert faults.injected["sparse-ids"] > 0
    assert sparse.value("SELECT count(*) FROM rejects") == [(0,)]
    assert (
        sparse.value("SELECT count(*) FROM tool_calls WHERE toolset IS NOT NULL AND toolset_tool_id IS NULL")[
            0
        ][0]
        == plain.value("SELECT count(*) FROM tool_calls WHERE toolset IS NOT NULL")[0][0]
        > 0
    )
    # No call drops out of the views: a toolset tool without its id is named by its toolset.
    totals = "SELECT sum(calls), count(*) FILTER (WHERE tool IS NULL) FROM daily_tool_calls"
    assert sparse.value(totals) == plain.value(totals)
    # Conversations and evaluation latencies name such a tool alike: `{toolset}`.
    toolsets = "SELECT DISTINCT tool FROM daily_tool_calls WHERE tool LIKE '%/toolsets/%'"
    subjects = "SELECT DISTINCT subject FROM evaluation_run_latencies WHERE subject LIKE '%/toolsets/%'"
    named = {tool for (tool,) in sparse.value(toolsets)} | {subject for (subject,) in sparse.value(subjects)}
    assert named and all(name.rsplit("/", 2)[-2] == "toolsets" for name in named)
    # Two callbacks of one stage are two rows, and every key is unique, so the checks pass.
    with sparse.warehouse.connect(read_only=True) as conn:
        for spec in EVALUATION_RUN_TABLES:
            assert run_check(conn, "duplicate_run_keys", {"app": APP}, spec).passed, spec.name
    runs_with_report = plain.value(
        "SELECT count(DISTINCT evaluation_run_name) FROM evaluation_run_latencies"
    )[0][0]
    extra = "SELECT count(*) FROM evaluation_run_latencies WHERE kind = 'callback'"
    assert sparse.value(extra)[0][0] == plain.value(extra)[0][0] + runs_with_report > 0


def test_a_server_reading_unset_sources_as_live_loses_nothing(plain: Ingest, tmp_path: Path) -> None:
    """The pipeline always sends `sources`, so a server that reads an unset one as LIVE only (as
    the deprecated `source` is documented) still lists every source."""
    faults, server = simulator("live-by-default:1")
    with server as sim:
        caller = McpHttp(sim.url)
        unasked = caller.all_items("list_conversations", "conversations", parent=APP, pageSize=PAGE_SIZE)
        caller.close()
        assert {c["source"] for c in unasked} == {"LIVE"} and faults.injected["live-by-default"] > 0
        asked = Ingest(sim.url, tmp_path)
    assert asked.rows() == plain.rows()
    assert len(unasked) < SCALE.conversation_count
