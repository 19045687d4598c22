"""Every fault kind of the simulator against a real ingest: fetch → raw lake → Parquet → DuckDB.

Each ingest under faults must end with exactly the rows of the same ingest without faults, or
fail with a clear error and leave what was loaded before untouched. Never silent loss.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster_runs import run_partitions

from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesPagingError, CesTransportError
from pipelines.ces.ratelimit import RateLimiter
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.tools import Listing
from pipelines.config import CesSettings
from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS
from pipelines.warehouse.duck import Warehouse

SCALE = SimulatorScale(seed=11, apps=1, days=1, conversations_per_day=30, max_turns=2)
DAYS = [SCALE.start_date + timedelta(days=i) for i in range(SCALE.days)]
APP = SCALE.app_names[0]
PAGE_SIZE = 6
TABLES = [spec.name for spec in (*CONVERSATION_TABLES, REJECTS)]
TIMEOUT_SECONDS = 2.0
"""The client's deadline: past it, a `slow` answer (a second longer) is retried. Long enough that a
loaded machine's ordinary answer never is, or the retry counts the tests check would drift."""
FAST = f"seed=5,retry-after=0.02,slow-seconds={TIMEOUT_SECONDS + 1.0}"


def config(faults: SimulatedFaults | None = None) -> SimulatorConfig:
    return SimulatorConfig(
        scale=SCALE, faults=faults, page_size_default=PAGE_SIZE, page_size_max=PAGE_SIZE, summary_fraction=0.3
    )


def settings(url: str, **overrides: Any) -> CesSettings:
    values = {
        "timeout_seconds": TIMEOUT_SECONDS,
        "retry_backoff_seconds": 0.01,
        "page_size": PAGE_SIZE,
        **overrides,
    }
    return CesSettings(mcp_url=url, **values)


def ingest(url: str, root: Path, **overrides: Any) -> tuple[Warehouse, Any]:
    """Fetch, flatten and load every day; returns the warehouse and the client's counters."""
    lake = Lake(str(root / "lake"))
    warehouse = Warehouse(str(root / "warehouse.duckdb"))
    with CesMcpClient(settings(url, **overrides), rate_limiter=RateLimiter(1_000_000)) as client:
        for day in DAYS:
            fetch_conversation_partition(client, lake, APP, day, Listing(page_size=PAGE_SIZE))
            flatten_conversation_partition(lake, APP, day)
            load_conversation_partitions(lake, warehouse, [(APP, day)])
        return warehouse, client.stats


def contents(warehouse: Warehouse) -> dict[str, list[tuple[Any, ...]]]:
    with warehouse.connect(read_only=True) as conn:
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in TABLES
        }


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Any, ...]]]:
    with running_simulator(config()) as sim:
        warehouse, stats = ingest(sim.url, tmp_path_factory.mktemp("baseline"))
    assert stats.retries == 0
    rows = contents(warehouse)
    assert len(rows["conversations"]) == SCALE.days * SCALE.conversations_per_day
    assert rows["rejects"] == []
    return rows


TRANSPORT = [
    "429",
    "500",
    "502",
    "503",
    "504",
    "403-quota",
    "503-retry-info",
    "rpc-error",
    "tool-error",
    "reset",
    "slow",
    "cut-sse",
    "bad-json",
]


@pytest.mark.parametrize("kind", TRANSPORT)
def test_transport_faults_are_retried_into_exactly_the_same_rows(kind: str, baseline, tmp_path: Path) -> None:
    rate = 0.25
    faults = SimulatedFaults(f"{kind}:{rate},limit=2,{FAST}")
    with running_simulator(config(faults)) as sim:
        warehouse, stats = ingest(sim.url, tmp_path)
    assert faults.injected[kind] > 0
    assert stats.retries == sum(faults.injected.values())  # each fault cost exactly one retry
    assert contents(warehouse) == baseline


@pytest.mark.parametrize(("kind", "rate"), [("expire-token", 0.15), ("dup", 0.5), ("repeat-page", 0.4)])
def test_data_faults_end_in_exactly_the_same_rows(kind: str, rate: float, baseline, tmp_path: Path) -> None:
    faults = SimulatedFaults(f"{kind}:{rate},limit=1,{FAST}")
    with running_simulator(config(faults)) as sim:
        warehouse, stats = ingest(sim.url, tmp_path)
    assert faults.injected[kind] > 0 and stats.retries == 0
    assert contents(warehouse) == baseline
    lake = Lake(str(tmp_path / "lake"))
    listed = [
        item["name"]
        for day in DAYS
        for record in lake.read_jsonl(lake.raw_path(CONVERSATIONS_DATASET, APP, day))
        if record["tool"] == "list_conversations"
        for item in record["result"].get("conversations", [])
    ]
    assert len(listed) > len(set(listed)) == len(baseline["conversations"])  # seen again, kept once


@pytest.fixture
def loaded_once(tmp_path: Path) -> Iterator[tuple[Path, dict[str, list[tuple[Any, ...]]], bytes]]:
    """A lake and warehouse holding a first, clean ingest; yields them and the raw file's bytes."""
    with running_simulator(config()) as sim:
        warehouse, _ = ingest(sim.url, tmp_path)
    raw = Lake(str(tmp_path / "lake")).raw_path(CONVERSATIONS_DATASET, APP, DAYS[0])
    yield tmp_path, contents(warehouse), Path(raw).read_bytes()


def test_a_server_that_stays_down_fails_clearly_and_keeps_what_was_loaded(loaded_once) -> None:
    root, before, raw_before = loaded_once
    faults = SimulatedFaults("503:1")
    with running_simulator(config(faults)) as sim, pytest.raises(CesTransportError) as info:
        ingest(sim.url, root, max_attempts=3)
    assert "HTTP 503" in str(info.value) and "gave up after 3 attempts" in str(info.value)
    assert faults.injected["503"] == 3
    assert contents(Warehouse(str(root / "warehouse.duckdb"))) == before
    raw = Lake(str(root / "lake")).raw_path(CONVERSATIONS_DATASET, APP, DAYS[0])
    assert Path(raw).read_bytes() == raw_before
    assert [p.name for p in Path(raw).parent.iterdir()] == [Path(raw).name]  # no temp file left


def test_page_tokens_that_keep_expiring_fail_clearly(loaded_once) -> None:
    root, before, raw_before = loaded_once
    with (
        running_simulator(config(SimulatedFaults("expire-token:1"))) as sim,
        pytest.raises(CesPagingError, match="refused its page token again after 3 fresh listing"),
    ):
        ingest(sim.url, root)
    assert contents(Warehouse(str(root / "warehouse.duckdb"))) == before
    raw = Lake(str(root / "lake")).raw_path(CONVERSATIONS_DATASET, APP, DAYS[0])
    assert Path(raw).read_bytes() == raw_before


def test_every_fault_at_once_through_dagster_counts_the_retries(
    baseline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults = SimulatedFaults(f"all:0.05,limit=2,{FAST}")
    with running_simulator(config(faults)) as sim:
        for name, value in {
            "CES_MCP_URL": sim.url,
            "CES_APPS": APP,
            "CES_LAKE": str(tmp_path / "lake"),
            "CES_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
            "CES_MAX_RPS": "1000",
            "CES_PAGE_SIZE": str(PAGE_SIZE),
            "CES_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
            "CES_RETRY_BACKOFF_SECONDS": "0.01",
        }.items():
            monkeypatch.setenv(name, value)
        outcomes = run_partitions(
            "ingest_conversations",
            [(APP, day) for day in DAYS],
            instance=dg.DagsterInstance.ephemeral(),
        )
    assert [o.error for o in outcomes] == [None]
    retries = sum(o.value("raw__conversation_pages", "retries") for o in outcomes)
    transport = sum(n for kind, n in faults.injected.items() if kind in TRANSPORT)
    assert retries == transport > 0
    assert contents(Warehouse(str(tmp_path / "warehouse.duckdb"))) == baseline


def test_evaluation_runs_and_results_survive_faults_and_restarted_listings(tmp_path: Path) -> None:
    """Faults that never reach the tools (so no run is polled more often) and expiring tokens:
    the same runs and results, each counted once."""
    from pipelines.ingest.evaluations import fetch_evaluation_runs, replay_evaluation_records

    scale = SimulatorScale(seed=11, apps=1, days=1, conversations_per_day=1, evaluation_runs_per_app=6)

    def fetch(faults: SimulatedFaults | None, folder: str) -> tuple[Any, Any, Any]:
        config = SimulatorConfig(scale=scale, faults=faults, page_size_default=2, page_size_max=2)
        lake = Lake(str(tmp_path / folder))
        with (
            running_simulator(config) as sim,
            CesMcpClient(settings(sim.url), rate_limiter=RateLimiter(1_000_000)) as client,
        ):
            fetched = fetch_evaluation_runs(client, lake, sim.apps[0], page_size=2)
            observation = replay_evaluation_records(lake.read_jsonl(fetched.path))
            return fetched, observation, client.stats

    clean, clean_seen, _ = fetch(None, "clean")
    faults = SimulatedFaults(f"503:0.2,429:0.2,reset:0.2,expire-token:0.3,limit=1,{FAST}")
    faulty, faulty_seen, stats = fetch(faults, "faulty")
    assert faults.injected["expire-token"] > 0 and stats.retries > 0
    assert (faulty.runs, faulty.results) == (clean.runs, clean.results) == (6, clean.results)
    assert [run for run, _ in faulty_seen.runs] == [run for run, _ in clean_seen.runs]
    assert faulty_seen.results == clean_seen.results
