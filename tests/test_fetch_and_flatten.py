"""A fetch that fails part way leaves the partition's previous raw file in place."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesError
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.tools import Listing
from pipelines.config import CesSettings
from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import CONVERSATIONS_DATASET
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS

SCALE = SimulatorScale(seed=11, apps=1, days=1, conversations_per_day=120, max_turns=4, span_depth=3)
DAY = SCALE.start_date
TABLES = (*CONVERSATION_TABLES, REJECTS)


def settings(url: str, **overrides: object) -> CesSettings:
    return CesSettings(mcp_url=url, max_rps=1000, page_size=25, **overrides)  # type: ignore[arg-type]


def raw_lines(lake: Lake, app: str, day: date = DAY) -> list[dict]:
    """The raw records without the time they were fetched at."""
    records = [orjson.loads(line) for line in lake.read_raw_lines(CONVERSATIONS_DATASET, app, day)]
    return [{k: v for k, v in record.items() if k != "fetched_at"} for record in records]


def tables(lake: Lake, app: str, day: date = DAY) -> dict[str, list[dict]]:
    found = {}
    for spec in TABLES:
        [path] = Path(lake.root, "tables", spec.name).glob(f"**/date={day}/*.parquet")
        found[spec.name] = pq.read_table(path).to_pylist()
    return found


@pytest.mark.parametrize("spec", ["bad-json:0.2,seed=3", "cut-sse:0.2,seed=5"])
def test_a_fetch_failing_part_way_leaves_the_previous_files(tmp_path: Path, spec: str) -> None:
    lake = Lake(str(tmp_path))
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25)) as sim:
        app = sim.apps[0]
        with CesMcpClient(settings(sim.url)) as client:
            fetch_conversation_partition(client, lake, app, DAY, Listing(page_size=25))
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    faults = SimulatedFaults(spec)
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25, faults=faults)) as sim:
        with (
            CesMcpClient(settings(sim.url, max_attempts=1)) as client,
            pytest.raises(CesError),
        ):
            fetch_conversation_partition(client, lake, app, DAY, Listing(page_size=25))
        requests = client.stats.requests
    assert requests > 1  # it failed after the first page, with lines already written
    after = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert after == before  # no temporary file left either
