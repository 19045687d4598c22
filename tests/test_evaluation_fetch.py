"""Evaluation runs and their results are fetched several runs at a time, under the shared rate
limit, into an observation file that keeps the order of a one-at-a-time fetch."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pipelines.ces.client import CesMcpClient
from pipelines.ces.daemon_threads import ordered_map
from pipelines.ces.ratelimit import RateLimiter
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.tools import GET_EVALUATION_RUN, LIST_EVALUATION_RESULTS
from pipelines.config import CesSettings
from pipelines.ingest.evaluations import fetch_evaluation_runs
from pipelines.lake.store import Lake


class InFlight:
    """A client that counts how many calls of each tool are under way at once."""

    def __init__(self, client: CesMcpClient):
        self._client = client
        self._lock = threading.Lock()
        self._now: dict[str, int] = {}
        self.peak: dict[str, int] = {}

    def has_tool(self, name: str) -> bool:
        return self._client.has_tool(name)

    def call_tool(self, name: str, arguments: Any = None, *, idempotent: bool | None = None) -> Any:
        with self._lock:
            self._now[name] = self._now.get(name, 0) + 1
            self.peak[name] = max(self.peak.get(name, 0), self._now[name])
        try:
            return self._client.call_tool(name, arguments, idempotent=idempotent)
        finally:
            with self._lock:
                self._now[name] -= 1


def fetch(tmp_path: Path, workers: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    scale = SimulatorScale(seed=3, apps=1, days=1, conversations_per_day=1, evaluation_runs_per_app=6)
    # Every response held back 50 ms, as a real server's latency: calls can only overlap if
    # they are made concurrently.
    config = SimulatorConfig(scale=scale, faults=SimulatedFaults("slow:1.0,slow-seconds=0.05"))
    with running_simulator(config) as sim:
        settings = CesSettings(mcp_url=sim.url, retry_backoff_seconds=0.01)
        with CesMcpClient(settings, rate_limiter=RateLimiter(1_000_000)) as client:
            counting = InFlight(client)
            lake = Lake(str(tmp_path / f"lake-{workers}"))
            fetched = fetch_evaluation_runs(counting, lake, sim.apps[0], workers=workers)  # type: ignore[arg-type]
    records = [{k: v for k, v in r.items() if k != "fetched_at"} for r in lake.read_jsonl(fetched.path)]
    assert fetched.runs == 6 and fetched.results > 0
    return records, counting.peak


def test_runs_and_results_are_fetched_concurrently_in_a_stable_order(tmp_path: Path) -> None:
    one_by_one, sequential_peak = fetch(tmp_path, workers=1)
    together, peak = fetch(tmp_path, workers=4)

    assert together == one_by_one  # the same records, in the same order
    assert sequential_peak[GET_EVALUATION_RUN] == sequential_peak[LIST_EVALUATION_RESULTS] == 1
    assert peak[GET_EVALUATION_RUN] > 1 and peak[LIST_EVALUATION_RESULTS] > 1
    assert max(peak.values()) <= 4


def test_ordered_map_keeps_order_and_runs_at_most_workers_ahead() -> None:
    started: list[int] = []

    def work(item: int) -> int:
        started.append(item)
        time.sleep(0.002 * (5 - item % 5))  # later items often finish first
        return item * 10

    results = ordered_map(work, range(20), workers=3, thread_name_prefix="test")
    first = next(results)
    assert first == 0 and len(started) <= 3  # nothing beyond the first `workers` calls yet
    assert [first, *results] == [item * 10 for item in range(20)]


def test_ordered_map_raises_in_place_and_starts_nothing_after() -> None:
    started: list[int] = []

    def work(item: int) -> int:
        started.append(item)
        if item == 2:
            raise ValueError("item 2 is broken")
        time.sleep(0.01)
        return item

    results = ordered_map(work, range(50), workers=2, thread_name_prefix="test")
    assert [next(results), next(results)] == [0, 1]
    with pytest.raises(ValueError, match="item 2"):
        next(results)
    assert set(started) <= {0, 1, 2, 3}  # the calls not started when it failed were cancelled
