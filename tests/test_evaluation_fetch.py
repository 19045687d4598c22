"""Evaluation runs and their results are fetched several runs at a time, under the shared rate
limit, into an observation file that keeps the order of a one-at-a-time fetch."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipelines.ces.client import CesMcpClient
from pipelines.ces.daemon_threads import ordered_map
from pipelines.ces.ratelimit import RateLimiter
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus.evaluations import RUN_STEPS, seeded_runs
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.tools import GET_EVALUATION_RUN, LIST_EVALUATION_RESULTS, LIST_EVALUATION_RUNS
from pipelines.config import CesSettings
from pipelines.ingest.evaluations import NewestFirst, fetch_evaluation_runs, load_observation_file
from pipelines.lake.store import Lake
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.stored import stored_runs


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


class Recording:
    """A client that records each call (tool, arguments); `ignore_order`: drops `orderBy`, as a
    server that does not know it would list in its own order."""

    def __init__(self, client: CesMcpClient, *, ignore_order: bool = False):
        self._client = client
        self.ignore_order = ignore_order
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def has_tool(self, name: str) -> bool:
        return self._client.has_tool(name)

    def call_tool(self, name: str, arguments: Any = None, *, idempotent: bool | None = None) -> Any:
        self.calls.append((name, dict(arguments or {})))
        if self.ignore_order:
            arguments = {key: value for key, value in (arguments or {}).items() if key != "orderBy"}
        return self._client.call_tool(name, arguments, idempotent=idempotent)


@pytest.mark.parametrize("ignore_order", [False, True], ids=["newest-first", "server-ignores-order"])
def test_a_discovery_lists_runs_back_to_the_stored_ones_and_fetches_unfinished_ones_by_name(
    tmp_path: Path, ignore_order: bool
) -> None:
    """Eight runs about a day apart, two old ones unfinished, all loaded by a first fetch. The
    next fetch, told what the warehouse holds, lists newest first and stops at the first page
    reaching a day before the newest stored run; it fetches the two unfinished runs by name, no
    final one again. A server listing in its own order is listed to the end, for the same runs."""
    scale = SimulatorScale(seed=3, apps=1, days=10, conversations_per_day=1, evaluation_runs_per_app=8)
    plans = sorted(seeded_runs(scale, 0), key=lambda plan: plan.create_time)
    unfinished = {plan.name for plan in plans if plan.start_step < RUN_STEPS}
    assert len(unfinished) == 2 and plans[-1].name not in unfinished  # old ones, as seeded
    lake, warehouse = Lake(str(tmp_path / "lake")), Warehouse(str(tmp_path / "w.duckdb"))
    with running_simulator(SimulatorConfig(scale=scale)) as sim:
        app = sim.apps[0]
        settings = CesSettings(mcp_url=sim.url, retry_backoff_seconds=0.01)
        with CesMcpClient(settings, rate_limiter=RateLimiter(1_000_000)) as client:
            first = fetch_evaluation_runs(client, lake, app, page_size=2)
            load_observation_file(lake, warehouse, app, first.path)
            known = stored_runs(warehouse, app)
            recording = Recording(client, ignore_order=ignore_order)
            fetch_evaluation_runs(recording, lake, app, **known, page_size=2)  # type: ignore[arg-type]
    assert set(known["unfinished_runs"]) == unfinished
    assert known["newest_created"] == datetime.fromtimestamp(plans[-1].create_time // 1000 / 1e6, UTC)
    listings = [arguments for tool, arguments in recording.calls if tool == LIST_EVALUATION_RUNS]
    fetched = {arguments["name"] for tool, arguments in recording.calls if tool == GET_EVALUATION_RUN}
    assert all(arguments["orderBy"] == "create_time desc" for arguments in listings)
    assert len(listings) == (4 if ignore_order else 1)
    assert fetched == unfinished


def test_a_listing_is_known_to_reach_the_stored_runs_only_while_newest_first() -> None:
    def run(day: int) -> dict[str, str]:
        return {"createTime": f"2026-11-{day:02d}T12:00:00.123456789Z"}

    since = int(datetime(2026, 11, 5, tzinfo=UTC).timestamp() * 1_000_000)
    in_order = NewestFirst(since)
    assert [in_order.reached_the_known(page) for page in ([run(9), run(8)], [run(6), run(4)])] == [
        False,
        True,
    ]
    shuffled = NewestFirst(since)
    assert not shuffled.reached_the_known([run(9), run(10)]) and not shuffled.reached_the_known([run(2)])
    unknown_time = NewestFirst(since)
    assert not unknown_time.reached_the_known([run(9), {"name": "x"}]) and not unknown_time.reached_the_known(
        [run(1)]
    )
    assert not NewestFirst(None).reached_the_known([run(1)])  # nothing stored: listed to the end
