"""Starting and stopping the simulator (the background context manager and the foreground
`serve`), and what ends a command's waits once a stop is asked."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from simulator_fixtures import McpHttp

from pipelines import stop
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus.headers import SOURCES
from pipelines.ces.simulator.runner import _server
from pipelines.listening import listening_socket, serve_foreground
from pipelines.protojson.timeparse import parse_timestamp_nanos

LIST_TOOLS = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
HEADERS = {"accept": "application/json", "content-type": "application/json"}


def test_running_simulator_serves_on_loopback_and_stops() -> None:
    config = SimulatorConfig(scale=SimulatorScale(apps=3))
    with running_simulator(config) as handle:
        assert handle.url.startswith("http://127.0.0.1:") and handle.url.endswith("/mcp")
        assert handle.apps == (
            "projects/sim-project/locations/us/apps/support-bot",
            "projects/sim-project/locations/us/apps/sales-bot",
            "projects/sim-project/locations/us/apps/app-3",
        )
        assert handle.config is config and handle.scale is config.scale
        assert httpx.post(handle.url, content=LIST_TOOLS, headers=HEADERS).status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.post(handle.url, content=LIST_TOOLS, headers=HEADERS)


def test_serve_announces_the_real_url_and_the_apps() -> None:
    script = "from pipelines.ces.simulator import serve; serve(port=0)"
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        apps = [server.stdout.readline().strip() for _ in range(2)]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp") and not url.endswith(":0/mcp")
        assert apps == [
            "projects/sim-project/locations/us/apps/support-bot",
            "projects/sim-project/locations/us/apps/sales-bot",
        ]
        assert httpx.post(url, content=LIST_TOOLS, headers=HEADERS, timeout=10).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_simulate_says_how_to_ingest_from_it(tmp_path) -> None:
    """Stdout: the URL and the app, what a script reads; stderr: the settings for `ingest`."""
    command = [sys.executable, "-m", "pipelines.cli", "simulate", "--port", "0", "--apps", "1"]
    server = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stderr is not None
        url, app = (server.stdout.readline().strip() for _ in range(2))
        assert app == "projects/sim-project/locations/us/apps/support-bot"
        assert server.stderr.readline() == f"ingest from it: export CES_MCP_URL={url} CES_APPS={app}\n"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_simulate_on_the_wall_clock_serves_days_up_to_today_as_they_arrive(tmp_path) -> None:
    """`simulate --as-of now` without `--start-date`: its days end today, and it serves what has
    started by now (the demo's first day, 2026-11-01, would serve only finished history)."""
    command = [sys.executable, "-m", "pipelines.cli", "simulate", "--port", "0", "--apps", "1"]
    command += ["--as-of", "now", "--days", "2", "--conversations-per-day", "48"]
    server = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert server.stdout is not None
        url, app = (server.stdout.readline().strip() for _ in range(2))
        caller = McpHttp(url)
        try:
            listed = caller.all_items(
                "list_conversations", "conversations", parent=app, sources=list(SOURCES)
            )
        finally:
            caller.close()
        asked = time.time_ns()
    finally:
        server.terminate()
        server.wait(timeout=10)
    today = datetime.now(UTC).date()
    starts = [parse_timestamp_nanos(item["startTime"]) for item in listed]
    days = {datetime.fromtimestamp(start / 1e9, UTC).date() for start in starts}
    assert days <= {today - timedelta(days=1), today} and today - timedelta(days=1) in days
    assert max(starts) <= asked  # nothing from later today


def test_a_stop_recorded_before_the_server_took_the_signals_ends_it() -> None:
    """Ctrl-C or SIGTERM between the announcement and uvicorn's start raises KeyboardInterrupt
    where the main thread happens to be: inside a weak reference's callback Python drops it, and
    only the stop it recorded is left to end the server."""
    server, sock = _server(SimulatorConfig()), listening_socket("127.0.0.1", 0)
    stop.requested.set()
    try:
        serving = threading.Thread(target=serve_foreground, args=(server, sock), daemon=True)
        serving.start()
        serving.join(timeout=10)
        assert not serving.is_alive()
        assert sock.fileno() == -1  # closed
    finally:
        stop.requested.clear()


def test_a_waiting_loops_pause_ends_on_a_stop_asked_before_or_during_it() -> None:
    """What a lost KeyboardInterrupt leaves a command's waiting loops (`dev`, the run queue, the
    evaluation gate): the stop it recorded, which ends their pause."""
    started = time.monotonic()
    stop.pause(0.05)  # no stop: a pause
    assert time.monotonic() - started >= 0.05
    try:
        stop.requested.set()
        with pytest.raises(KeyboardInterrupt):
            stop.pause(60)
        stop.requested.clear()
        threading.Timer(0.1, stop.requested.set).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            stop.pause(60)
        assert time.monotonic() - started < 5
    finally:
        stop.requested.clear()
