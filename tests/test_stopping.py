"""Stopping a long-running command ends every process it started, however it was started."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import httpx
import pytest
from dagster_runs import instance_at

from scale.servers import postgres_binaries

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _running() -> dict[int, tuple[int, int, str]]:
    """The processes running, as their parent, group and command line by pid. A zombie is not one:
    it has ended, and only waits for its reaper, which in a container may be an init that never
    reaps."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
            words = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):  # ended meanwhile
            continue
        if state != "Z":
            found[int(stat.parent.name)] = (int(parent), int(group), words)
    return found


def _still_running(pgid: int) -> list[str]:
    """The command lines of the running processes of group `pgid`."""
    return [words for _, group, words in _running().values() if group == pgid]


def _started_by(pid: int) -> dict[int, str]:
    """The running processes `pid` started, and those they started, and so on: their command lines."""
    running = _running()
    tree, added = set(), {pid}
    while added:
        tree |= added
        added = {child for child, (parent, _, _) in running.items() if parent in added} - tree
    return {child: running[child][2] for child in tree - {pid}}


@pytest.mark.parametrize(
    "stop",
    [(signal.SIGTERM, "up"), (signal.SIGINT, "starting"), (signal.SIGHUP, "starting")],
    ids=["sigterm-once-up", "ctrl-c-while-starting", "terminal-closed-while-starting"],
)
def test_dev_ends_every_process_it_started(workdir: Path, stop: tuple[signal.Signals, str]) -> None:
    """`ces-pipeline dev`, `dagster dev` and the servers and runs it starts all end within 20 s
    (well before the 45 s after which the code server would end of itself, its parent's heartbeat
    gone), without a traceback, whether
    - a shell started it as a background job (SIGINT ignored) and SIGTERM comes to its group once
      the UI answers, or
    - Ctrl-C (SIGINT to its group, as a terminal sends it) comes while `dagster dev` starts its
      servers, which are still importing, or
    - its terminal is closed then (SIGHUP to its group, as the shell sends it to its jobs), which
      does not reach `dagster dev`'s own group."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))}
    env |= {"DAGSTER_HOME": str(workdir / "dagster_home"), "CES_LAKE": str(workdir / "lake")}
    env |= {"CES_WAREHOUSE": str(workdir / "warehouse.duckdb")}
    command = [sys.executable, "-m", "pipelines.cli", "dev", "--ui-port", str(port)]
    command += ["--apps", "1", "--days", "1", "--conversations-per-day", "2"]
    signo, when = stop
    background = when == "up"
    dev = subprocess.Popen(
        command,
        cwd=workdir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a group of its own, as a job of a shell is
        preexec_fn=lambda: _as_a_job(background),
    )
    said, started = [], {}
    try:
        deadline = time.monotonic() + 180
        if background:
            while not _answers(port):
                assert dev.poll() is None, dev.communicate()[1]
                assert time.monotonic() < deadline, "the Dagster UI never answered"
                time.sleep(0.5)
            assert _first_day(port) == "2026-11-01"  # the demo's first day, not the default start
        else:
            for line in dev.stderr:  # `dagster dev` starts once the demo's data is in
                said.append(line)
                if line.startswith("Dagster UI on"):
                    break
            while not any("dagster_webserver" in words for words in _started_by(dev.pid).values()):
                assert dev.poll() is None and time.monotonic() < deadline, "dagster dev started no server"
                time.sleep(0.1)
        started = _started_by(dev.pid)
        assert any("dagster dev" in words for words in started.values()), started
        os.killpg(dev.pid, signo)
        stopped_by = time.monotonic() + 20
        while left := [
            words for pid, (_, group, words) in _running().items() if pid in started or group == dev.pid
        ]:
            assert time.monotonic() < stopped_by, f"outlived the signal by 20 s: {[w[:100] for w in left]}"
            time.sleep(0.1)
        said.append(dev.communicate(timeout=5)[1])
        assert dev.returncode == 0
        assert "Traceback" not in "".join(said), "".join(said)
        assert "SupersessionWarning" not in "".join(said)  # `dg dev` is not installed
    finally:
        if _still_running(dev.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(dev.pid, signal.SIGKILL)
        running = _running()
        for pid, words in started.items():  # `dagster dev`'s group, which a failed stop leaves up
            if pid in running and running[pid][2] == words:  # that process still, not a pid reused
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        dev.wait()
        dev.stderr.close()


def _as_a_job(background: bool) -> None:
    """The signals of a shell's job: SIGHUP as a terminal leaves it (not ignored, whether or not
    the suite itself runs under `nohup`), SIGINT ignored for a background job."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    if background:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


_DAY_KEYS = """{ assetNodeOrError(assetKey: {path: ["warehouse", "conversation_tables"]}) {
  ... on AssetNode { partitionKeysByDimension { name partitionKeys } } } }"""


def _first_day(port: int) -> str:
    """The first day partition the Dagster UI shows for the warehouse's conversation tables."""
    answer = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": _DAY_KEYS}, timeout=30).json()
    dimensions = answer["data"]["assetNodeOrError"]["partitionKeysByDimension"]
    (days,) = [dimension["partitionKeys"] for dimension in dimensions if dimension["name"] == "date"]
    return days[0]


def _slow_simulator(cwd: Path) -> tuple[subprocess.Popen[str], str, str]:
    """`ces-pipeline simulate` answering every request in 200 s (the `slow` fault): the process,
    its URL and its app."""
    command = [sys.executable, "-m", "pipelines.cli", "simulate", "--port", "0", "--apps", "1"]
    command += ["--faults", "slow:1,slow-seconds=200"]
    server = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    url, app = (server.stdout.readline().strip() for _ in range(2))
    return server, url, app


def test_a_server_answering_slowly_stops_within_seconds_of_sigterm(tmp_path: Path) -> None:
    """The simulator holding a request it answers in 200 s ends soon after SIGTERM: the request
    in flight gets the shutdown grace, not its whole answer time."""
    server, url, _ = _slow_simulator(tmp_path)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    holder = subprocess.Popen(  # a client whose request the server holds
        [sys.executable, "-c", f"import httpx; httpx.post({url!r}, json={call!r}, timeout=300)"],
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1.5)
        assert holder.poll() is None  # still waiting for its answer
        started = time.monotonic()
        server.terminate()
        server.wait(timeout=30)
        stopped_after = time.monotonic() - started
    finally:
        server.kill()
        holder.kill()
    assert stopped_after < 10, f"stopped {stopped_after:.1f} s after SIGTERM"


def _connections_held_open(port: int) -> int:
    """Established TCP connections to `port` on 127.0.0.1, as the kernel lists them (clients' ends)."""
    held = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            next(rows)
            for row in rows:
                _, _, remote, state, *_ = row.split()
                held += state == "01" and int(remote.rsplit(":", 1)[1], 16) == port
    return held


@pytest.mark.parametrize("ctrl_c", [False, True], ids=["sigterm", "ctrl-c"])
def test_ingest_waiting_for_an_answer_ends_within_seconds_of_sigterm(workdir: Path, ctrl_c: bool) -> None:
    """`ces-pipeline ingest` whose request the server holds for 200 s ends within 10 s of SIGTERM,
    or of Ctrl-C (SIGINT to its whole process group, as a terminal sends it), the run recorded
    as interrupted: the answer in flight is not waited for, and no process of the group prints
    a traceback."""
    server, url, app = _slow_simulator(workdir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))}
    env |= {"DAGSTER_HOME": str(workdir / "dagster_home"), "CES_LAKE": str(workdir / "lake")}
    env |= {"CES_WAREHOUSE": str(workdir / "warehouse.duckdb"), "CES_MCP_URL": url, "CES_APPS": app}
    command = [sys.executable, "-m", "pipelines.cli", "ingest", "--skip-evaluations"]
    ingest = subprocess.Popen(
        [*command, "--since", "2026-11-01", "--until", "2026-11-02"],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=ctrl_c,
    )
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    try:
        deadline = time.monotonic() + 120  # Dagster's start, then the first request, held
        while not _connections_held_open(port):
            assert ingest.poll() is None, ingest.communicate()[1]
            assert time.monotonic() < deadline, "ingest never sent its first request"
            time.sleep(0.2)
        time.sleep(1)  # the request is written and its answer awaited
        started = time.monotonic()
        if ctrl_c:
            os.killpg(ingest.pid, signal.SIGINT)
        else:
            ingest.terminate()
        _, stderr = ingest.communicate(timeout=60)
        stopped_after = time.monotonic() - started
    finally:
        ingest.kill()
        server.kill()
    assert stopped_after < 10, f"ingest ended {stopped_after:.1f} s after SIGTERM"
    assert ingest.returncode == 130 and "interrupted" in stderr, stderr
    assert "Traceback" not in stderr, stderr
    with instance_at(workdir / "dagster_home") as instance:
        (run,) = instance.get_runs()  # the one run, recorded as ended; the next day's not started
    assert run.status is dg.DagsterRunStatus.FAILURE


def _processes_naming(text: str) -> dict[int, str]:
    """The running processes whose command lines mention `text`: their command lines by pid."""
    found = {}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        if text in words:
            found[int(cmdline.parent.name)] = words
    return found


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary folder other users can enter (PostgreSQL runs as its own user), unlike pytest's."""
    folder = Path(tempfile.mkdtemp(prefix="ces-stop-"))
    folder.chmod(0o755)
    yield folder
    for pid in _processes_naming(str(folder)):  # what a failed test left running
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)


def test_scale_demo_ends_every_process_it_started_on_sigterm_to_its_group(open_tmp: Path) -> None:
    """`make scale-demo` stopped while its runs go: PostgreSQL (a daemon in a session of its own),
    the Dagster daemon with its code server and runs, and the demo itself are all gone within
    20 s of SIGTERM to the group. Every one of them names the demo's temporary folder, set here."""
    if postgres_binaries() is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    tmp_path = open_tmp
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))}
    env["TMPDIR"] = str(tmp_path)
    demo = subprocess.Popen(
        [sys.executable, "-m", "scale.demo", "--apps", "1", "--conversations", "20"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert demo.stderr is not None
        said = []
        for line in demo.stderr:  # the services are up once it says what it runs
            said.append(line)
            if line.startswith("$ ces-pipeline ingest"):
                break
        else:
            pytest.fail(f"the scale demo ended before its ingest (exit {demo.wait()}): {''.join(said)}")
        deadline = time.monotonic() + 60  # a run started by the daemon, with its log tails
        while not any("compute_logs" in words for words in _processes_naming(str(tmp_path)).values()):
            assert time.monotonic() < deadline, "the daemon started no run"
            time.sleep(0.2)
        os.killpg(demo.pid, signal.SIGTERM)
        stopped_by = time.monotonic() + 20
        while left := _still_running(demo.pid) + list(_processes_naming(str(tmp_path)).values()):
            assert time.monotonic() < stopped_by, f"outlived SIGTERM by 20 s: {left}"
            time.sleep(0.1)
        assert demo.wait() == 130
    finally:
        if _still_running(demo.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(demo.pid, signal.SIGKILL)
        demo.wait()


LOST_IN_A_CALLBACK = """
import contextlib
import weakref
from dagster._core.errors import DagsterExecutionInterruptedError
from pipelines import stop

class Thing:
    pass

def raising(error):
    def callback(_ref):
        raise error
    return callback

@contextlib.contextmanager
def cleaning_up():
    try:
        yield
    finally:
        raise RuntimeError("a cleanup on a closed connection")

stop.watch_signals()
other = Thing()
refs = [weakref.ref(other, raising(ValueError("bug")))]
del other
thing = Thing()
refs.append(weakref.ref(thing, raising(DagsterExecutionInterruptedError())))
del thing
print(stop.requested.is_set())
entered = cleaning_up()
entered.__enter__()  # a signal here, as the block is entered, would leave it unexited
del entered
"""


def test_an_interruption_lost_in_a_callback_is_a_stop_not_a_traceback() -> None:
    """A signal's exception raised inside a weak reference's callback (where Python ignores it)
    records a stop and prints nothing; any other exception there is printed as Python would before
    a stop, and not after it, when it comes from a cleanup the stop left to the garbage collector."""
    ran = subprocess.run(
        [sys.executable, "-c", LOST_IN_A_CALLBACK], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "True"
    assert "Interrupted" not in ran.stderr
    assert "ValueError: bug" in ran.stderr
    assert "a cleanup on a closed connection" not in ran.stderr


LEFT_RUNNING = """
import threading
import time

import duckdb

from pipelines import stop

conn = duckdb.connect()
started = threading.Event()
ended = []


def query():
    started.set()
    try:
        conn.execute("SELECT count(*) FROM range(100000000000) AS t(x) WHERE x % 7 = 3").fetchall()
    except duckdb.Error as exc:
        ended.append(type(exc).__name__)


reader = threading.Thread(target=query)
try:
    with stop.interruptible(conn):
        reader.start()
        started.wait()
        time.sleep(0.5)
        raise KeyboardInterrupt
except KeyboardInterrupt:
    pass
reader.join()
print(ended)
"""


def test_a_connection_an_exception_leaves_ends_the_query_it_left_running() -> None:
    """Ctrl-C's KeyboardInterrupt may end the wait for a query without ending the query, which
    runs on: the connection is interrupted on the way out, and closing it does not wait minutes for
    the query to finish (here, one of about ten minutes running on a thread of its own)."""
    started = time.monotonic()
    ran = subprocess.run(
        [sys.executable, "-c", LEFT_RUNNING], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "['InterruptException']"
    assert time.monotonic() - started < 30


SIGNALLED_WHILE_RECORDING = """
import os
import signal
import sys

from pipelines import stop
from pipelines.cli import _interrupt, _terminate

signal.signal(signal.SIGINT, _interrupt)
signal.signal(signal.SIGTERM, _terminate)
stop.watch_signals()
recording = stop.requested.set.__code__
lines = []


def tracer(frame, event, arg):
    return inside if event == "call" and frame.f_code is recording else None


def inside(frame, event, arg):
    if event == "line":
        lines.append(frame.f_lineno)
        if len(lines) == 2:  # the first signal's stop half recorded: the second comes
            os.kill(os.getpid(), signal.SIGTERM)
    return inside


sys.settrace(tracer)
try:
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(1000):
        pass
except KeyboardInterrupt:
    print(stop.requested.is_set(), len(lines) >= 2)
"""


def test_a_signal_that_comes_while_the_last_ones_stop_is_recorded_is_a_stop_too() -> None:
    """Two signals at once (Ctrl-C pressed twice, a supervisor's SIGTERM on top of a terminal's
    SIGINT): the second's handler runs inside the first's, on the same thread. Recording the stop
    took a lock there, which the first held: the command waited for it for ever."""
    ran = subprocess.run(
        [sys.executable, "-c", SIGNALLED_WHILE_RECORDING],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "True True"


STUCK = """
import os
import signal
import sys
import time

from pipelines import stop

signal.signal(signal.SIGINT, lambda *_: stop.requested.set())  # recorded; the command goes on
stop.watch_signals()
if sys.argv[1] == "stuck":  # as in a call no signal reaches
    with stop.ended_within(1.0):
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
if sys.argv[1] == "stuck-after-its-run":  # the run's own grace ends, the command's goes on
    with stop.ended_within(1.0):
        with stop.ended_within(1.0):
            os.kill(os.getpid(), signal.SIGINT)
            stop.requested.wait(5)
            time.sleep(0.3)  # the run winds down, its deadline armed
        while True:
            time.sleep(0.05)
with stop.ended_within(1.0):  # a command that ends by itself once stopped
    os.kill(os.getpid(), signal.SIGINT)
    stop.requested.wait(5)
time.sleep(2)
print("went on", flush=True)
"""


def test_a_command_still_busy_past_the_grace_after_a_stop_ends_there() -> None:
    """A command stopped while it waits in a call no stop reaches (libpq, waiting for a catalog
    that answers nothing) ends once the grace is past, with a line and exit 130; one that ends by
    itself leaves its process alone (a test calling `main` goes on). A run's grace that ends with
    its run leaves the command's in place."""
    stuck = subprocess.Popen(
        [sys.executable, "-c", STUCK, "stuck"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert stuck.stdout is not None and stuck.stdout.readline().strip() == "ready"
        stopped = time.monotonic()
        stuck.send_signal(signal.SIGINT)
        _, stderr = stuck.communicate(timeout=30)
    finally:
        stuck.kill()
    assert stuck.returncode == 130, stderr
    assert 1.0 <= time.monotonic() - stopped < 10
    assert stderr.startswith("interrupted: still busy 1 s after the stop") and stderr.count("\n") == 1, stderr
    ended = subprocess.run(
        [sys.executable, "-c", STUCK, "ends"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert ended.returncode == 0 and ended.stdout.strip() == "went on", ended.stderr
    after = subprocess.run(
        [sys.executable, "-c", STUCK, "stuck-after-its-run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert after.returncode == 130, after.stderr


RUN_STUCK = """
import signal
import sys
import time

import dagster as dg

from pipelines import stop
from pipelines.config import Settings
from pipelines.orchestration.resources import WarehouseResource

stop.STOP_GRACE_SECONDS = 1.0


@dg.asset
def stuck(warehouse: WarehouseResource) -> None:
    if sys.argv[1] == "stuck":  # as in a call no interrupt reaches: Dagster's is never raised
        signal.signal(signal.SIGINT, lambda *_: None)
    print("ready", flush=True)
    while sys.argv[1] == "stuck":
        time.sleep(0.05)


warehouse = WarehouseResource.from_settings(Settings.from_env().storage)
ended = dg.materialize([stuck], resources={"warehouse": warehouse}, raise_on_error=False)
print("ended", ended.success, flush=True)
time.sleep(2)  # past the grace: a run that ended leaves its process alone
print("went on", flush=True)
"""


def test_a_dagster_run_still_busy_past_the_grace_after_its_termination_ends_there(tmp_path: Path) -> None:
    """Dagster terminates a run (the UI's Terminate, run monitoring past `dagster/max_runtime`)
    with a SIGINT to its process: a run stuck where no interrupt reaches ends once the grace is
    past, with a line and exit 130, where it kept its process and a core busy for ever; a run
    that ends leaves its process alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))}
    env |= {"CES_WAREHOUSE": str(tmp_path / "warehouse.duckdb"), "CES_LAKE": str(tmp_path / "lake")}
    command = [sys.executable, "-c", RUN_STUCK]
    stuck = subprocess.Popen(
        [*command, "stuck"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert stuck.stdout is not None and stuck.stdout.readline().strip() == "ready"
        stopped = time.monotonic()
        stuck.send_signal(signal.SIGINT)  # what Dagster's termination sends the run's process
        _, stderr = stuck.communicate(timeout=30)
    finally:
        stuck.kill()
    assert stuck.returncode == 130, stderr
    assert 1.0 <= time.monotonic() - stopped < 10
    assert "interrupted: still busy 1 s after the stop" in stderr, stderr
    ends = subprocess.run([*command, "ends"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert ends.returncode == 0, ends.stderr
    assert ends.stdout.split() == ["ready", "ended", "True", "went", "on"]
