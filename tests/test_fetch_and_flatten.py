"""Fetch and flatten in one pass (the bulk ingest's worker) against the simulator over HTTP.

It must leave the lake a fetch followed by a flatten leaves: the same raw lines and the same
Parquet tables; and, when the fetch fails part-way, the partition's previous files untouched.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesError
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.config import CesSettings
from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.stream import fetch_and_flatten_conversation_partition, ingest_task
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS

SCALE = SimulatorScale(seed=11, apps=1, days=1, conversations_per_day=120, max_turns=4, span_depth=3)
DAY = SCALE.start_date
TABLES = (*CONVERSATION_TABLES, REJECTS)


def settings(url: str, **overrides: object) -> CesSettings:
    return CesSettings(mcp_url=url, max_rps=1000, page_size=25, **overrides)  # type: ignore[arg-type]


def raw_lines(lake: Lake, app: str) -> list[dict]:
    """The raw records without the time they were fetched at."""
    records = [orjson.loads(line) for line in lake.read_raw_lines(CONVERSATIONS_DATASET, app, DAY)]
    return [{k: v for k, v in record.items() if k != "fetched_at"} for record in records]


def tables(lake: Lake, app: str) -> dict[str, list[dict]]:
    found = {}
    for spec in TABLES:
        [path] = Path(lake.root, "tables", spec.name).glob(f"**/date={DAY}/*.parquet")
        found[spec.name] = pq.read_table(path).to_pylist()
    return found


def test_one_pass_leaves_the_lake_a_fetch_then_a_flatten_leaves(tmp_path: Path) -> None:
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25)) as sim:
        app = sim.apps[0]
        apart, together = Lake(str(tmp_path / "apart")), Lake(str(tmp_path / "together"))
        with CesMcpClient(settings(sim.url)) as client:
            fetched = fetch_conversation_partition(client, apart, app, DAY, page_size=25)
            flattened = flatten_conversation_partition(apart, app, DAY)
            fetched_once, flattened_once = fetch_and_flatten_conversation_partition(
                client, together, app, DAY, page_size=25
            )
    assert fetched.hydrated > 0 and fetched.pages > 1
    assert (fetched_once.pages, fetched_once.listed, fetched_once.hydrated, fetched_once.records) == (
        fetched.pages,
        fetched.listed,
        fetched.hydrated,
        fetched.records,
    )
    assert fetched_once.path == together.raw_path(CONVERSATIONS_DATASET, app, DAY)
    assert flattened_once.rows == flattened.rows and flattened.rows["conversations"] == 120
    assert raw_lines(together, app) == raw_lines(apart, app)
    assert tables(together, app) == tables(apart, app)


def test_the_worker_task_reports_rows_and_requests(tmp_path: Path) -> None:
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25)) as sim:
        summary = ingest_task(str(tmp_path), sim.apps[0], DAY, settings(sim.url))
    assert summary["rows"]["conversations"] == 120 and summary["rows"]["spans"] > 120
    assert summary["listed"] == 120 and summary["hydrated"] > 0
    assert summary["requests"] == summary["pages"] + summary["hydrated"]


@pytest.mark.parametrize("spec", ["bad-json:0.2,seed=3", "cut-sse:0.2,seed=5"])
def test_a_fetch_failing_part_way_leaves_the_previous_files(tmp_path: Path, spec: str) -> None:
    lake = Lake(str(tmp_path))
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25)) as sim:
        app = sim.apps[0]
        with CesMcpClient(settings(sim.url)) as client:
            fetch_and_flatten_conversation_partition(client, lake, app, DAY, page_size=25)
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    faults = SimulatedFaults(spec)
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25, faults=faults)) as sim:
        with (
            CesMcpClient(settings(sim.url, max_attempts=1)) as client,
            pytest.raises(CesError),
        ):
            fetch_and_flatten_conversation_partition(client, lake, app, DAY, page_size=25)
        requests = client.stats.requests
    assert requests > 1  # it failed after the first page, with lines already written
    after = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert after == before  # no temporary file left either
