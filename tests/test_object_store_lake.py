"""The lake on object storage, really run: `CES_LAKE=s3://…` against moto's S3 server and
`CES_LAKE=gs://…` against fake-gcs-server, reached through the storage's standard variables.
The default commands write the lake there and rebuild the same rows from it alone, nothing of
the lake lands on local disk, and an ingest killed mid-write leaves every visible object as it
was."""

from __future__ import annotations

import gzip
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_cli import base_env, cli, table_contents
from test_crash import Versions, expected_after, ingest, killed_at, languages, warehouse_rows

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ingest.evaluations import STARTED_RUNS_STATE
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES
from scale.servers import KINDS, ObjectStore, object_store

SCALE = SimulatorScale(
    seed=17, apps=1, days=2, conversations_per_day=6, max_turns=3, evaluation_runs_per_app=2
)
WINDOW = ("--since", "2026-11-01", "--until", "2026-11-03")


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest) -> Iterator[ObjectStore]:
    with object_store(request.param) as running:
        yield running


def visible(objects: dict[str, bytes]) -> dict[str, bytes]:
    """What readers of the lake see: names starting with '.' (temporary files) are skipped by all."""
    return {
        path: data for path, data in objects.items() if not any(p.startswith(".") for p in path.split("/"))
    }


def test_ingest_and_rebuild_with_the_lake_on_an_object_store(
    store: ObjectStore, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        served = {"CES_MCP_URL": sim.url, "CES_APPS": sim.apps[0]}
        env = base_env(workdir) | store.env | served | {"CES_LAKE": store.lake()}
        ingested = cli("ingest", *WINDOW, env=env, cwd=workdir)
        assert ingested.returncode == 0, ingested.stderr
        assert "ingested 2 partitions in 1 run: 12 conversations loaded" in ingested.stderr
    objects = store.objects(store.lake())
    assert objects == visible(objects), "a temporary object was left behind"
    raw = [path for path in objects if path.endswith("/records.jsonl.gz")]
    assert len(raw) == 2 and all(objects[path][:2] == b"\x1f\x8b" for path in raw)  # gzip
    parquet = [path for path in objects if path.endswith(".parquet")]
    assert len(parquet) == 2 * (len(CONVERSATION_TABLES) + 1)  # the tables and the rejects, per day
    assert any("/raw/evaluation_runs/" in path for path in objects)
    assert not (workdir / "lake").exists(), "nothing of the lake may land on local disk"
    ingested_rows = table_contents(workdir / "warehouse.duckdb")
    assert len(ingested_rows["conversations"]) == 12 and len(ingested_rows["spans"]) > 12
    assert len(ingested_rows["evaluation_runs"]) == 2

    # Everything the warehouse holds comes back from the store alone.
    rebuilt = cli(
        "rebuild", *WINDOW, env=env | {"CES_WAREHOUSE": str(workdir / "rebuilt.duckdb")}, cwd=workdir
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    again = table_contents(workdir / "rebuilt.duckdb")
    conversation_tables = [spec.name for spec in CONVERSATION_TABLES]
    assert {t: again[t] for t in conversation_tables} == {t: ingested_rows[t] for t in conversation_tables}
    assert len(again["evaluation_runs"]) == 2  # replayed from the fetches kept in the store

    # A state document settled (a run `evaluate` started, stored final) moves within the store.
    for name, value in store.env.items():
        monkeypatch.setenv(name, value)
    lake = Lake(store.lake())
    lake.write_state(STARTED_RUNS_STATE, "operations/o", {"evaluation_run": "r"})
    assert lake.read_states(STARTED_RUNS_STATE) == [{"evaluation_run": "r"}]
    lake.settle_state(STARTED_RUNS_STATE, "operations/o")
    assert lake.read_states(STARTED_RUNS_STATE) == []
    settled = [path for path in store.objects(store.lake()) if f"/state/{STARTED_RUNS_STATE}/" in path]
    assert [path.rsplit("/", 2)[-2:] for path in settled] == [["done", "operations%2Fo.json"]]

    # A lake in a bucket the store does not have: said in a line, not a client's traceback.
    missing = f"{store.kind}://no-such-{store.bucket}/ces"
    refused = cli("rebuild", env=env | {"CES_LAKE": missing}, cwd=workdir)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 1 and "Traceback" not in said, refused.stderr
    assert f"cannot list the lake {missing}: FileNotFoundError" in said


def test_killed_while_writing_parquet_to_an_object_store(
    store: ObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # as the killed child's TMPDIR
    staging = tmp_path / f"ces-pipeline-uploads-{os.getuid()}"
    versions = Versions()
    config = SimulatorConfig(
        scale=SimulatorScale(seed=13, apps=1, days=2, conversations_per_day=20, max_turns=2)
    )
    lake = store.lake()
    with running_simulator(
        SimulatorConfig(scale=config.scale, faults=SimulatedFaults(corrupt=versions))
    ) as sim:
        ingest(sim.url, tmp_path, lake_root=lake)
        before_lake, before = visible(store.objects(lake)), warehouse_rows(tmp_path)
        assert languages(before) == {"v1"}
        versions.version = 2
        with killed_at(sim.url, tmp_path, "parquet", lake=lake):
            seen = visible(store.objects(lake))
            assert seen.keys() == before_lake.keys()
            fs = store.filesystem()
            for path, data in seen.items():
                if path.endswith(".parquet"):
                    pq.read_table(path, filesystem=fs)  # every visible Parquet file is whole
                    assert data == before_lake[path]  # and is the one from before
                else:  # the raw file the child fetched before it was killed: whole
                    assert gzip.decompress(data).endswith(b"\n")
            assert warehouse_rows(tmp_path) == before
        # the uploads the kill cut off (a table each) left their staged files, which later
        # uploads of the same name delete once stale
        left = list(staging.glob(".part-0.parquet.*.tmp"))
        assert left
        an_hour_ago = time.time() - 3601
        for path in left:
            os.utime(path, (an_hour_ago, an_hour_ago))
        ingest(sim.url, tmp_path, lake_root=lake)  # the re-run
        assert list(staging.iterdir()) == []
        assert warehouse_rows(tmp_path) == expected_after(sim.url, versions, tmp_path / "clean")
    assert languages(warehouse_rows(tmp_path)) == {"v2"}
