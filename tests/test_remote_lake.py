"""The lake goes through fsspec: a non-local filesystem works end to end, no local path involved."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import dagster as dg
import fsspec
import pytest
from dagster_runs import run_partitions

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.lake.store import Lake
from pipelines.warehouse.duck import Warehouse

SCALE = SimulatorScale(
    seed=13, apps=1, days=1, conversations_per_day=8, max_turns=3, evaluation_runs_per_app=0
)


def test_ingest_and_rebuild_with_the_lake_on_an_fsspec_memory_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = f"memory://lake-{uuid.uuid4().hex}"
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        for key, value in {
            "CES_MCP_URL": sim.url,
            "CES_APPS": sim.apps[0],
            "CES_LAKE": root,
            "CES_WAREHOUSE": warehouse.path,
            "CES_MAX_RPS": "500",
        }.items():
            monkeypatch.setenv(key, value)
        partitions = [(sim.apps[0], SCALE.start_date + timedelta(days=0))]
        instance = dg.DagsterInstance.ephemeral()
        outcomes = run_partitions("ingest_conversations", partitions, instance=instance)
        assert [o.error for o in outcomes] == [None]
    assert warehouse.row_counts()["conversations"] == SCALE.conversations_per_day
    memory = fsspec.filesystem("memory")
    files = memory.find(root.removeprefix("memory://"))
    raw = [f for f in files if f.endswith("records.jsonl.gz")]
    assert len(raw) == 1
    assert Lake(root).raw_partitions("conversations") == [partitions[0]] and memory.size(raw[0]) > 0
    assert sum(f.endswith("part-0.parquet") for f in files) == 9
    lake_files = [path for path in tmp_path.glob("**/*.parquet") if warehouse.parts_root not in path.parents]
    assert not lake_files, "nothing of the lake may land on local disk (the warehouse keeps its own parts)"
    rebuilt = run_partitions("rebuild_conversations", partitions, instance=instance)
    assert [o.error for o in rebuilt] == [None]
    assert warehouse.row_counts()["conversations"] == SCALE.conversations_per_day
