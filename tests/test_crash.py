"""Crash safety: an ingest killed with SIGKILL mid-write loses nothing and shows nothing half-done.

The ingest runs in a child process (`python tests/test_crash.py`) that stops at a chosen point,
in the middle of writing a Parquet file or in the middle of the warehouse transaction, and
says so; the test then kills it with SIGKILL (no cleanup handler runs) and inspects the lake
and the warehouse from outside. The data served changes between the first ingest ("before")
and the killed one ("after"), so "as before" and "as after" are told apart.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pyarrow.parquet as pq
import pytest
from dagster_runs import instance_at
from test_cli import base_env, cli

from pipelines.ces.client import CesMcpClient
from pipelines.ces.ratelimit import RateLimiter
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.config import CesSettings
from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, CONVERSATIONS, REJECTS
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.lock import WarehouseBusyError

SCALE = SimulatorScale(seed=13, apps=1, days=2, conversations_per_day=20, max_turns=2)
APP = SCALE.app_names[0]
TABLES = [spec.name for spec in (*CONVERSATION_TABLES, REJECTS)]


# -- the child ---------------------------------------------------------------------------------


def _stop_here(marker: str) -> None:
    """Tell the parent we are at the crash point, then wait to be killed."""
    Path(marker).write_text(str(os.getpid()))
    while True:
        time.sleep(60)


def _install_crash_point(point: str, marker: str) -> None:
    if point == "parquet":
        from pipelines.lake import store

        original_write = store.TableWriter.write

        def write(self: Any, batch: Any) -> None:
            original_write(self, batch)
            if self.spec.name == "spans" and self.rows:
                _stop_here(marker)  # the file is open, part-written, not renamed yet

        store.TableWriter.write = write
    elif point == "warehouse":
        from pipelines.warehouse import duck, loads, parts

        original_insert = loads._insert
        original_write = parts.PartWriter.write

        def insert(conn: Any, statement: str, *args: Any, **names: str) -> int:
            inserted = original_insert(conn, statement, *args, **names)
            if statement == "insert_partitions_parquet" and names["table"] == "spans":
                # a DuckLake: old rows deleted, some new ones inserted, nothing committed
                _stop_here(marker)
            return inserted

        def write_part(self: Any, statement: str, spec: Any, *args: Any, **values: str) -> int:
            written = original_write(self, statement, spec, *args, **values)
            if spec.name == "spans":  # a DuckDB file: new parts written, none listed
                _stop_here(marker)
            return written

        loads._insert = insert
        parts.PartWriter.write = write_part
    elif point.startswith("hold:"):  # keep the warehouse transaction open for a while, log when
        # hold:SECONDS, or hold:SECONDS:RELEASE: until the file RELEASE exists, at most SECONDS
        from pipelines.warehouse import duck, loads, parts

        original_load = duck.Warehouse.conversation_load
        _, seconds_text, *release = point.split(":", 2)
        seconds = float(seconds_text)
        original_insert = loads._insert
        original_write = parts.PartWriter.write

        def hold() -> None:
            with open(marker, "a") as log:
                log.write(f"in {time.time()}\n")
            until = time.monotonic() + seconds
            while time.monotonic() < until and not (release and os.path.exists(release[0])):
                time.sleep(0.02)

        def slow_insert(conn: Any, statement: str, *args: Any, **names: str) -> int:
            if statement == "insert_partitions_parquet" and names["table"] == "conversations":
                hold()
            return original_insert(conn, statement, *args, **names)

        def slow_write(self: Any, statement: str, spec: Any, *args: Any, **values: str) -> int:
            if spec.name == "conversations":
                hold()
            return original_write(self, statement, spec, *args, **values)

        parts.PartWriter.write = slow_write

        @contextmanager
        def conversation_load(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            with original_load(self, *args, **kwargs) as load:
                yield load
            with open(marker, "a") as log:  # committed
                log.write(f"out {time.time()}\n")

        loads._insert = slow_insert
        duck.Warehouse.conversation_load = conversation_load


def child_main() -> None:
    job = json.loads(os.environ["CRASH_TEST_JOB"])
    _install_crash_point(job["point"], job["marker"])
    ingest(job["url"], Path(job["root"]), job["day"], job["lake"], job["warehouse"])


def ingest(
    url: str, root: Path, day_index: int = 0, lake_root: str | None = None, warehouse: str | None = None
) -> None:
    """Fetch, flatten and load one day into `root` (its lake `root/lake` and warehouse
    `root/warehouse.duckdb` unless given)."""
    day = SCALE.start_date.fromordinal(SCALE.start_date.toordinal() + day_index)
    lake = Lake(lake_root or str(root / "lake"))
    settings = CesSettings(mcp_url=url, retry_backoff_seconds=0.01)
    with CesMcpClient(settings, rate_limiter=RateLimiter(1_000_000)) as client:
        fetch_conversation_partition(client, lake, APP, day)
    flatten_conversation_partition(lake, APP, day)
    target = Warehouse(
        warehouse or str(root / "warehouse.duckdb"), data_path=str(root / "lake" / "warehouse")
    )
    load_conversation_partitions(lake, target, [(APP, day)])


# -- the parent --------------------------------------------------------------------------------


class Versions:
    """Serves the corpus with `languageCode` stamped by version, switchable while serving."""

    def __init__(self) -> None:
        self.version = 1

    def __call__(self, conversation: dict[str, Any]) -> dict[str, Any]:
        return {**conversation, "languageCode": f"v{self.version}"}


@pytest.fixture
def simulator() -> Iterator[tuple[str, Versions]]:
    versions = Versions()
    with running_simulator(SimulatorConfig(scale=SCALE, faults=SimulatedFaults(corrupt=versions))) as sim:
        yield sim.url, versions


def start_child(
    url: str,
    root: Path,
    point: str,
    marker: Path,
    day: int = 0,
    lake: str | None = None,
    warehouse: str | None = None,
) -> subprocess.Popen:
    job = {"url": url, "root": str(root), "point": point, "marker": str(marker), "day": day}
    job |= {"lake": lake, "warehouse": warehouse}
    return subprocess.Popen(
        [sys.executable, __file__],
        # TMPDIR: what a kill leaves of the child's temporary files (an object store's upload
        # staged whole) stays in the test's folder
        env={**os.environ, "CRASH_TEST_JOB": json.dumps(job), "TMPDIR": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextmanager
def killed_at(url: str, root: Path, point: str, lake: str | None = None) -> Iterator[None]:
    """Run an ingest in a child until it reaches `point`, then SIGKILL it."""
    marker = root / f"at-{point}"
    child = start_child(url, root, point, marker, lake=lake)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, child.communicate()[1]
        assert time.monotonic() < deadline, "the child never reached the crash point"
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL
    yield


def visible_lake(root: Path) -> dict[str, bytes]:
    """Every file a reader of the lake can see (names starting with '.' are skipped by all)."""
    lake = root / "lake"
    return {
        str(path.relative_to(lake)): path.read_bytes()
        for path in sorted(lake.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(lake).parts)
    }


def warehouse_rows(root: Path) -> dict[str, list[tuple[Any, ...]]]:
    with Warehouse(str(root / "warehouse.duckdb"), lock_timeout_seconds=5).connect(read_only=True) as conn:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}


def languages(rows: dict[str, list[tuple[Any, ...]]]) -> set[str]:
    """The language codes the conversations hold: the version of the corpus they came from."""
    column = CONVERSATIONS.warehouse_schema.get_field_index("language_code")
    return {row[column] for row in rows["conversations"]}


def expected_after(url: str, versions: Versions, root: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The warehouse a clean ingest of the current version gives, in a folder of its own."""
    ingest(url, root)
    return warehouse_rows(root)


def test_killed_while_writing_parquet(simulator, tmp_path: Path) -> None:
    url, versions = simulator
    ingest(url, tmp_path)
    before_lake, before = visible_lake(tmp_path), warehouse_rows(tmp_path)
    assert languages(before) == {"v1"}
    versions.version = 2
    with killed_at(url, tmp_path, "parquet"):
        tables = tmp_path / "lake" / "tables"
        leftovers = [p for p in tables.rglob("*") if p.name.startswith(".") and p.name.endswith(".tmp")]
        assert leftovers, "the crash left no temporary file: it did not happen mid-write"
        seen = visible_lake(tmp_path)
        for path in seen:
            if path.endswith(".parquet"):
                pq.read_table(tmp_path / "lake" / path)  # every visible Parquet file is whole
                assert seen[path] == before_lake[path]  # and is the one from before
        assert warehouse_rows(tmp_path) == before
    ingest(url, tmp_path)  # the re-run
    assert warehouse_rows(tmp_path) == expected_after(url, versions, tmp_path / "clean")
    assert languages(warehouse_rows(tmp_path)) == {"v2"}
    # A fresh temporary file may be a concurrent writer's: left alone. An old one is debris.
    assert all(path.exists() for path in leftovers)
    an_hour_ago = time.time() - 3700
    for path in leftovers:
        os.utime(path, (an_hour_ago, an_hour_ago))
    ingest(url, tmp_path)
    assert not any(path.exists() for path in leftovers)


def test_killed_in_the_middle_of_the_warehouse_load(simulator, tmp_path: Path) -> None:
    url, versions = simulator
    ingest(url, tmp_path)
    before = warehouse_rows(tmp_path)
    versions.version = 2
    with killed_at(url, tmp_path, "warehouse"):
        assert warehouse_rows(tmp_path) == before  # the load wrote a working copy only
        assert (tmp_path / "warehouse.duckdb.loading").exists()
        with Warehouse(str(tmp_path / "warehouse.duckdb"), lock_timeout_seconds=1).connect() as conn:
            assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == len(before["spans"])
    assert not (tmp_path / "warehouse.duckdb.loading").exists()  # replaced by the next load's, published
    ingest(url, tmp_path)
    after = warehouse_rows(tmp_path)
    assert after == expected_after(url, versions, tmp_path / "clean") != before
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as conn:
        listed = {file for (file,) in conn.execute("SELECT file FROM warehouse_parts").fetchall()}
        retired = {file for (file,) in conn.execute("SELECT file FROM warehouse_retired_parts").fetchall()}
    parts_root = tmp_path / "warehouse.duckdb.parts"
    on_disk = {str(path.relative_to(parts_root)) for path in parts_root.glob("*/*/*/*.parquet")}
    assert on_disk == listed | retired  # the killed load's parts were swept when its partition was loaded


def intervals(log: Path) -> list[tuple[float, float]]:
    stamps = [line.split() for line in log.read_text().splitlines()]
    starts = [float(t) for kind, t in stamps if kind == "in"]
    ends = [float(t) for kind, t in stamps if kind == "out"]
    return list(zip(starts, ends, strict=True))


def test_two_ingests_at_once_wait_for_each_other(simulator, tmp_path: Path) -> None:
    url, _ = simulator
    logs = [tmp_path / "log-0", tmp_path / "log-1"]
    children = [start_child(url, tmp_path, "hold:1.0", logs[day], day=day) for day in (0, 1)]
    for child in children:
        _, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, stderr
    (_, first_out), (second_in, _) = sorted(intervals(logs[0]) + intervals(logs[1]))
    assert first_out <= second_in, "the two warehouse transactions overlapped"
    rows = warehouse_rows(tmp_path)
    assert len(rows["conversations"]) == 2 * SCALE.conversations_per_day
    assert len({row[0] for row in rows["conversations"]}) == 2 * SCALE.conversations_per_day


def test_an_ingest_that_cannot_wait_long_enough_fails_clearly(simulator, tmp_path: Path) -> None:
    url, _ = simulator
    ingest(url, tmp_path, 1)
    holder = start_child(url, tmp_path, "hold:2.0", tmp_path / "log-holder", day=0)
    while not (tmp_path / "log-holder").exists():
        assert holder.poll() is None, holder.communicate()[1]
        time.sleep(0.02)
    impatient = Warehouse(str(tmp_path / "warehouse.duckdb"), lock_timeout_seconds=0.3)
    day = SCALE.start_date.fromordinal(SCALE.start_date.toordinal() + 1)
    with pytest.raises(WarehouseBusyError, match=r"another ingest held it for more than 0\.3 s"):
        load_conversation_partitions(Lake(str(tmp_path / "lake")), impatient, [(APP, day)])
    assert holder.wait(timeout=60) == 0
    load_conversation_partitions(Lake(str(tmp_path / "lake")), impatient, [(APP, day)])
    rows = warehouse_rows(tmp_path)
    assert len(rows["conversations"]) == 2 * SCALE.conversations_per_day


def test_the_lock_is_freed_by_a_killed_writer(tmp_path: Path) -> None:
    """A killed process's advisory lock dies with it: nothing to clean up by hand."""
    path = tmp_path / "warehouse.duckdb"
    script = (
        "import sys, time\n"
        "from pipelines.warehouse.duck import Warehouse\n"
        f"with Warehouse({str(path)!r}).connect() as conn:\n"
        "    conn.execute('CREATE TABLE t AS SELECT 1 AS x')\n"
        "    print('holding', flush=True)\n"
        "    time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "holding"
    with pytest.raises(WarehouseBusyError), Warehouse(str(path), lock_timeout_seconds=0.2).connect():
        pass
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    with Warehouse(str(path), lock_timeout_seconds=2).connect() as conn:
        assert conn.execute("SELECT count(*) FROM duckdb_tables()").fetchone() is not None


CLI_KILLED_IN_LOAD = """
import os, sys, time
from pipelines.warehouse import parts

original_write = parts.PartWriter.write


def write(self, statement, spec, *args, **values):
    written = original_write(self, statement, spec, *args, **values)
    if spec.name == "spans":
        mark = os.environ["CRASH_MARKER"]  # whole and closed once seen: a signal then
        open(mark + ".new", "w").close()  # finds no file object being freed
        os.replace(mark + ".new", mark)
        time.sleep(600)
    return written


parts.PartWriter.write = write
from pipelines.cli import main

sys.exit(main(sys.argv[1:]))
"""


CLI_STOPPED_IN_A_QUERY = CLI_KILLED_IN_LOAD.replace(
    "time.sleep(600)",  # a DuckDB query running when the signal comes, as in a large load
    'self._conn.execute("SELECT count(*) FROM range(1000000000000) AS t(x) WHERE x % 7 = 3").fetchall()',
)


CLI_STOPPED_BEFORE_THE_RUN = """
import os, sys, time
import dagster as dg

original_create_run = dg.DagsterInstance.create_run_for_job


def create_run(self, *args, **values):
    run = original_create_run(self, *args, **values)  # recorded NOT_STARTED; its steps not begun
    mark = os.environ["CRASH_MARKER"]  # whole and closed once seen: a signal then
    open(mark + ".new", "w").close()  # finds no file object being freed
    os.replace(mark + ".new", mark)
    time.sleep(600)
    return run


dg.DagsterInstance.create_run_for_job = create_run
from pipelines.cli import main

sys.exit(main(sys.argv[1:]))
"""


CLI_STOPPED_AFTER_THE_RUN = """
import os, sys, time
from pipelines.orchestration import runs

original_outcome = runs.run_outcome


def run_outcome(*args):
    outcome = original_outcome(*args)  # the run ended, recorded
    mark = os.environ["CRASH_MARKER"]  # whole and closed once seen: a signal then
    open(mark + ".new", "w").close()  # finds no file object being freed
    os.replace(mark + ".new", mark)
    time.sleep(600)
    return outcome


runs.run_outcome = run_outcome
from pipelines.cli import main

sys.exit(main(sys.argv[1:]))
"""


CLI_KILLED_IN_FETCH = """
import os, sys, time
from pipelines.lake import store

original_write_raw = store.Lake.write_raw


def write_raw(self, *args, **names):
    written = original_write_raw(self, *args, **names)
    mark = os.environ["CRASH_MARKER"]  # whole and closed once seen: a signal then
    open(mark + ".new", "w").close()  # finds no file object being freed
    os.replace(mark + ".new", mark)
    time.sleep(600)  # still inside the fetch step, which holds its ces_api pool slot
    return written


store.Lake.write_raw = write_raw
from pipelines.cli import main

sys.exit(main(sys.argv[1:]))
"""


def cli_env(tmp_path: Path, url: str) -> dict[str, str]:
    """The environment of a CLI ingest in `tmp_path`: the project's instance settings (none of
    its local runs), the simulator at `url`, and the marker the patched load writes."""
    import shutil

    (tmp_path / "dagster_home").mkdir()
    shutil.copy(
        Path(__file__).resolve().parent.parent / "dagster_home" / "dagster.yaml", tmp_path / "dagster_home"
    )
    return {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))} | {
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
        "CES_LAKE": str(tmp_path / "lake"),
        "CES_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "CES_MCP_URL": url,
        "CES_APPS": APP,
        "CES_MAX_RPS": "1000",
        "CRASH_MARKER": str(tmp_path / "marker"),
    }


def cli_stopped_at_marker(
    script: str, args: list[str], env: dict[str, str], tmp_path: Path
) -> subprocess.Popen:
    """`ces-pipeline ARGS` as a process of its own, patched by `script` to write the marker and
    stop at one point; returned once it is there (its output piped, as text)."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (tmp_path / "marker").exists():
        assert child.poll() is None and time.monotonic() < deadline, "the CLI never reached the marked point"
        time.sleep(0.05)
    return child


@pytest.mark.parametrize(
    ("script", "said", "status"),
    [
        (CLI_STOPPED_BEFORE_THE_RUN, "the run in progress is recorded as failed; no other", "FAILURE"),
        (CLI_STOPPED_AFTER_THE_RUN, "no further", "SUCCESS"),
    ],
    ids=["before-the-run", "after-the-run"],
)
def test_ctrl_c_around_a_run_says_what_became_of_it(
    simulator, tmp_path: Path, script: str, said: str, status: str
) -> None:
    """Ctrl-C once Dagster has created a run but before it starts it (Dagster leaves such a run
    NOT_STARTED, and no run monitor ever ends one): the CLI records it as failed and says so.
    Ctrl-C once the run has ended: it stays as it ended, and the CLI says only that no other
    run was started."""
    env = cli_env(tmp_path, simulator[0])
    args = ["ingest", "--since", "2026-11-01", "--until", "2026-11-03", "--skip-evaluations"]
    child = cli_stopped_at_marker(script, args, env | {"CES_DAYS_PER_RUN": "1"}, tmp_path)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.strip().endswith(f"interrupted: {said} run was started"), stderr
    with instance_at(tmp_path / "dagster_home") as instance:
        (run,) = instance.get_runs()  # the first of two days' runs; the second never created
        assert run.status.value == status
        failures = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records
    reasons = [record.event_log_entry.dagster_event.message for record in failures]
    assert reasons == (["interrupted before it started"] if status == "FAILURE" else [])


def test_a_killed_cli_ingest_does_not_block_the_next(simulator, tmp_path: Path) -> None:
    """Through the CLI and the persistent Dagster instance: a run killed inside the warehouse
    load leaves nothing loaded and no lock held (the kernel frees it with the process); the next
    ingest completes, and the instance records both runs: the killed one as it was left."""
    env = cli_env(tmp_path, simulator[0])
    args = [
        "ingest",
        "--since",
        "2026-11-01",
        "--until",
        "2026-11-02",
        "--skip-evaluations",
    ]
    child = cli_stopped_at_marker(CLI_KILLED_IN_LOAD, args, env, tmp_path)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert not (tmp_path / "warehouse.duckdb").exists() or warehouse_rows(tmp_path)["conversations"] == []

    rerun = cli(*args, env=env, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert len(warehouse_rows(tmp_path)["conversations"]) == SCALE.conversations_per_day
    with instance_at(tmp_path / "dagster_home") as instance:
        statuses = sorted(run.status.value for run in instance.get_runs())
    assert statuses == ["FAILURE", "SUCCESS"]  # the killed one recorded as failed by the next


def test_runs_killed_while_holding_every_api_slot_do_not_stall_the_next(simulator, tmp_path: Path) -> None:
    """Killed outright inside the fetch step, which holds a `ces_api` pool slot, with one slot
    in all: the next ingest records the killed run as failed, frees its slot and completes."""
    env = cli_env(tmp_path, simulator[0]) | {"CES_API_CONCURRENCY": "1"}
    args = ["ingest", "--since", "2026-11-01", "--until", "2026-11-02", "--skip-evaluations"]
    child = cli_stopped_at_marker(CLI_KILLED_IN_FETCH, args, env, tmp_path)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    with instance_at(tmp_path / "dagster_home") as instance:
        (killed,) = instance.get_runs()
        assert (
            killed.status == dg.DagsterRunStatus.STARTED
            and instance.event_log_storage.get_concurrency_run_ids() == {killed.run_id}
        )

    rerun = cli(*args, env=env, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    said = " ".join(rerun.stderr.split())
    assert (
        f"run {killed.run_id} was left unfinished by a ces-pipeline that was killed: recorded as failed"
        in said
    )
    assert len(warehouse_rows(tmp_path)["conversations"]) == SCALE.conversations_per_day
    with instance_at(tmp_path / "dagster_home") as instance:
        assert instance.get_run_by_id(killed.run_id).status == dg.DagsterRunStatus.FAILURE
        assert instance.event_log_storage.get_concurrency_run_ids() == set()


if __name__ == "__main__":
    child_main()


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize("script", [CLI_KILLED_IN_LOAD, CLI_STOPPED_IN_A_QUERY], ids=["python", "duckdb"])
def test_an_interrupted_cli_ingest_says_so_in_a_line_and_starts_no_further_run(
    simulator, tmp_path: Path, signo: signal.Signals, script: str
) -> None:
    """Ctrl-C or SIGTERM inside the first of two runs, in Python or in a DuckDB query (which
    DuckDB ends with an error of its own): exit 130 with one line, the run recorded as failed,
    the second never started, no lock left: the next ingest loads both days."""
    env = cli_env(tmp_path, simulator[0]) | {"CES_DAYS_PER_RUN": "1"}  # two days, two runs
    args = ["ingest", "--since", "2026-11-01", "--until", "2026-11-03", "--skip-evaluations"]
    child = cli_stopped_at_marker(script, args, env, tmp_path)
    child.send_signal(signo)
    try:
        _, stderr = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()  # not left running its query after the test
        child.communicate()
        raise
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 3
    assert stderr.strip().endswith(
        "interrupted: the run in progress is recorded as failed; no other run was started"
    )
    assert "partitions" not in stderr, stderr  # no line counts the interrupted run done
    with instance_at(tmp_path / "dagster_home") as instance:
        statuses = [run.status.value for run in instance.get_runs()]
    assert statuses == ["FAILURE"]  # the second run was never started

    rerun = cli(*args, env=env, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert len(warehouse_rows(tmp_path)["conversations"]) == 2 * SCALE.conversations_per_day


REPORT_STOPPED_IN_A_QUERY = """
import os
import sys
import threading

from pipelines.warehouse import queries

original_start = queries.NamedQuery.start


def mark():
    marker = os.environ["CRASH_MARKER"]
    open(marker + ".new", "w").close()
    os.replace(marker + ".new", marker)


def start(self, conn, params=None):
    # the marker once the query runs: a signal before it starts would find no query to interrupt
    threading.Timer(1.0, mark).start()
    conn.execute("SELECT count(*) FROM range(1000000000000) AS t(x) WHERE x % 7 = 3").fetchall()
    return original_start(self, conn, params)


queries.NamedQuery.start = start
from pipelines.cli import main

sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_report_stopped_in_a_query_says_interrupted_in_a_line(
    tmp_path: Path, signo: signal.Signals
) -> None:
    """Ctrl-C or SIGTERM while `report` reads the warehouse (a DuckDB query, which DuckDB ends with
    an error of its own, and which the signal may leave running on DuckDB's threads): exit 130 and
    one line within seconds, as when it stops anywhere else."""
    import trend_samples

    _, warehouse = trend_samples.build_warehouse(tmp_path / "built")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))} | {
        "CES_WAREHOUSE": warehouse.path,
        "CES_REPORT": str(tmp_path / "report.html"),
        "CRASH_MARKER": str(tmp_path / "marker"),
    }
    child = cli_stopped_at_marker(REPORT_STOPPED_IN_A_QUERY, ["report"], env, tmp_path)
    child.send_signal(signo)
    try:
        _, stderr = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise
    assert child.returncode == 130, stderr
    assert stderr.strip() == "interrupted", stderr
    assert not (tmp_path / "report.html").exists()


@contextmanager
def silent_catalog(*, connected: bool = False) -> Iterator[tuple[str, list[socket.socket]]]:
    """A PostgreSQL catalog's conninfo whose server takes connections and never answers (hung, or
    behind a firewall), and the connections it took; `connected`: it first lets libpq connect
    (PostgreSQL's startup: no TLS, no password), then answers nothing."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def take() -> None:
        conn = listener.accept()[0]
        if connected:
            _startup(conn)
        accepted.append(conn)

    threading.Thread(target=take, daemon=True).start()
    try:
        yield f"dbname=ces host=127.0.0.1 port={listener.getsockname()[1]} user=ces sslmode=disable", accepted
    finally:
        listener.close()
        for conn in accepted:
            conn.close()


def _startup(conn: socket.socket) -> None:
    """PostgreSQL's side of a connection's startup, as a server that asks for no password does."""

    def message(kind: bytes, body: bytes) -> bytes:
        return kind + struct.pack("!I", len(body) + 4) + body

    while True:
        length, code = struct.unpack("!II", conn.recv(8, socket.MSG_WAITALL))
        conn.recv(length - 8, socket.MSG_WAITALL)
        if code != 80877104:  # not a request for GSS encryption (refused): the startup message
            break
        conn.sendall(b"N")
    settings = {"server_version": "16.0", "server_encoding": "UTF8", "client_encoding": "UTF8"}
    answer = message(b"R", struct.pack("!I", 0))  # authenticated
    answer += b"".join(message(b"S", f"{key}\0{value}\0".encode()) for key, value in settings.items())
    conn.sendall(answer + message(b"K", struct.pack("!II", 1, 2)) + message(b"Z", b"I"))


GRACE = "import sys; from pipelines import cli, stop; stop.STOP_GRACE_SECONDS = 3; sys.exit(cli.main())"
"""`ces-pipeline` with 3 s of grace after a stop instead of 30."""


def report_on_catalog(catalog: str, tmp_path: Path, *, grace: bool = False) -> subprocess.Popen:
    """`ces-pipeline report` on a DuckLake whose catalog is `catalog`, as a process of its own
    (`grace`: with `GRACE`'s)."""
    env = {k: v for k, v in base_env(tmp_path).items() if not k.startswith("PG")} | {
        "CES_WAREHOUSE": f"ducklake:postgres:{catalog}",
        "CES_WAREHOUSE_DATA_PATH": str(tmp_path / "data"),
        "CES_REPORT": str(tmp_path / "report.html"),
    }
    return subprocess.Popen(
        [sys.executable, *(["-c", GRACE] if grace else ["-m", "pipelines.cli"]), "report"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stopped_once_taken(
    child: subprocess.Popen, accepted: list[socket.socket], signo: int, wait: float = 0.0
) -> tuple[str, float]:
    """`signo` sent to `child` `wait` seconds after the catalog took its connection; its stderr,
    and the seconds it took to end."""
    try:
        deadline = time.monotonic() + 60
        while not accepted:  # the catalog's connection is taken: the attach waits for its answer
            assert child.poll() is None and time.monotonic() < deadline, child.communicate()
            time.sleep(0.05)
        time.sleep(wait)
        assert child.poll() is None, child.communicate()
        stopped = time.monotonic()
        child.send_signal(signo)
        _, stderr = child.communicate(timeout=30)
        return stderr, time.monotonic() - stopped
    finally:
        child.kill()


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_command_stopped_while_attaching_a_silent_catalog_says_interrupted(
    tmp_path: Path, signo: signal.Signals
) -> None:
    """Ctrl-C or SIGTERM while a DuckLake's catalog holds the attach (libpq's connect, which no
    signal ends, waits out the catalog's `connect_timeout` first): exit 130 and one line, where it
    used to print DuckDB's `Query interrupted` with a traceback."""
    with silent_catalog() as (catalog, accepted):
        child = report_on_catalog(f"{catalog} connect_timeout=2", tmp_path)
        stderr, _ = stopped_once_taken(child, accepted, signo)
    assert child.returncode == 130, stderr
    assert stderr.strip() == "interrupted", stderr


@pytest.mark.parametrize("wait", [0.0, 0.3, 1.0])  # the attach sends its first query, then waits
def test_a_command_waiting_on_a_connected_catalog_that_answers_nothing_ends_on_ctrl_c(
    tmp_path: Path, wait: float
) -> None:
    """A catalog that lets the attach connect and then answers nothing, which no timeout of
    libpq bounds: Ctrl-C ends the command with exit 130 and one line, at once, or, when libpq's
    wait is on the command's own thread (where DuckDB ran the attach), once the grace is past."""
    with silent_catalog(connected=True) as (catalog, accepted):
        child = report_on_catalog(catalog, tmp_path, grace=True)
        stderr, took = stopped_once_taken(child, accepted, signal.SIGINT, wait)
    assert child.returncode == 130, stderr
    assert took < 15
    assert stderr.startswith("interrupted") and stderr.count("\n") == 1, stderr


def test_a_catalog_that_never_answers_fails_the_command_in_seconds(tmp_path: Path) -> None:
    """A catalog that takes the connection and never answers, its conninfo silent on
    `connect_timeout` (libpq would wait forever): the command fails after ten seconds and says so."""
    with silent_catalog() as (catalog, _):
        child = report_on_catalog(catalog, tmp_path)
        try:
            _, stderr = child.communicate(timeout=60)
        finally:
            child.kill()
    assert child.returncode == 1, stderr
    assert "cannot attach the DuckLake warehouse" in stderr and "timeout expired" in stderr, stderr
