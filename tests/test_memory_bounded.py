"""Memory stays flat: rebuilding four times the conversations takes no more memory.

A subprocess writes N simulator conversations into raw-lake partitions of 500 (the size of
real traffic: ~20 KB, ~8 turns, ~48 spans each); another rebuilds them and reports its peak
memory. At 1,000 and at 4,000 conversations the peak must stay under one fixed bound, and the
larger run may not need more than a few MB beyond the smaller one: partition after partition
in one process, flattened then loaded, what a Dagster run over a range of partitions does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

PER_PARTITION = 500
BOUND_MB = 450
"""Imports (pyarrow, DuckDB, numpy: ~90 MB) plus one batch of 200 conversations in flight and
one partition's DuckDB load; measured at ~300 MB."""
GROWTH_MB = 50
"""Measured 30-38 MB more at 4,000 conversations than at 1,000 (four runs), 40 MB on a busy
machine; 20-23 MB since a load's DuckDB buffer pool is bounded (`DEFAULT_WRITE_MEMORY_LIMIT`: 278 and
300 MB). Holding the input instead would add hundreds of MB."""


def _write_corpus(lake_root: str, conversations: int) -> None:
    from pipelines.ces.simulator.corpus import ConversationKey, SimulatorScale, conversation
    from pipelines.ces.tools import LIST_CONVERSATIONS
    from pipelines.lake.store import Lake

    days = max(1, conversations // PER_PARTITION)
    scale = SimulatorScale(apps=1, days=days, conversations_per_day=PER_PARTITION, max_turns=10, span_depth=4)
    lake = Lake(lake_root)
    for day_index in range(days):
        day = scale.start_date + timedelta(days=day_index)

        def pages(day_index: int = day_index) -> object:
            for first in range(0, PER_PARTITION, 100):
                items = [
                    conversation(scale, ConversationKey(0, day_index, i)) for i in range(first, first + 100)
                ]
                yield {"tool": LIST_CONVERSATIONS, "arguments": {}, "result": {"conversations": items}}

        lake.write_raw("conversations", scale.app_names[0], day, pages())


def _rebuild(lake_root: str, warehouse_path: str) -> dict[str, int]:
    from pipelines.ingest.flatten import flatten_conversation_partition
    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.lake.store import Lake
    from pipelines.warehouse.duck import Warehouse

    lake, warehouse = Lake(lake_root), Warehouse(warehouse_path)
    loaded = {"conversations": 0, "spans": 0}
    for app, day in lake.raw_partitions("conversations"):
        flatten_conversation_partition(lake, app, day)
        rows = load_conversation_partitions(lake, warehouse, [(app, day)])[(app, day)]
        loaded["conversations"] += rows["conversations"]
        loaded["spans"] += rows["spans"]
    return loaded


def _main(mode: str, *args: str) -> None:
    """Subprocess: rebuild the lake's conversations, or ingest them from a simulator, and report
    (the corpus was written, or is served, by another process: its memory is not measured)."""
    if mode == "rebuild":
        lake_root, work = args
        loaded = _rebuild(lake_root, f"{work}/warehouse.duckdb")
        print(json.dumps({**loaded, "peak_rss_mb": _peak_rss_mb()}))


def _peak_rss_mb() -> float:
    """This process's own peak RSS (VmHWM). Not getrusage: on Linux its ru_maxrss carries over
    the high-water mark of the process that forked us, so a large test runner would show."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _clean_env() -> dict[str, str]:
    """What earlier tests left in os.environ must not change the measure."""
    return {key: os.environ[key] for key in ("PATH", "HOME", "TMPDIR", "LANG") if key in os.environ}


@pytest.fixture(scope="module")
def lakes(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Raw lakes of 1,000 and 4,000 simulator conversations, written once for both tests."""
    written = {}
    for conversations in (1_000, 4_000):
        root = tmp_path_factory.mktemp(f"lake-{conversations}")
        subprocess.run(
            [sys.executable, __file__, "write", str(conversations), str(root)],
            check=True,
            capture_output=True,
        )
        written[conversations] = root
    return written


def rebuild_peak(lake: Path, work: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "rebuild", str(lake), str(work)],
        env=_clean_env(),
        check=True,
        capture_output=True,
        text=True,
        timeout=240,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_flat(
    small: dict[str, float], large: dict[str, float], peak: str, bound: float, growth: float = GROWTH_MB
) -> None:
    """Both runs loaded everything, stayed under `bound`, and the larger needed little more."""
    assert (small["conversations"], large["conversations"]) == (1_000, 4_000)
    assert small[peak] < bound, small
    assert large[peak] < bound, large
    assert large[peak] - small[peak] < growth, (small, large)


@pytest.mark.timeout(300)
def test_rebuild_memory_does_not_grow_with_the_number_of_conversations(
    lakes: dict[int, Path], tmp_path: Path
) -> None:
    small = rebuild_peak(lakes[1_000], tmp_path / "small")
    large = rebuild_peak(lakes[4_000], tmp_path / "large")
    assert large["spans"] > 4 * 40 * 1_000 / 4
    assert_flat(small, large, "peak_rss_mb", BOUND_MB)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        _write_corpus(sys.argv[3], int(sys.argv[2]))
    else:
        _main(*sys.argv[1:])
