"""What SECURITY.md promises: the token stays secret, API names stay data (never paths or SQL),
TLS is verified, and the simulator listens on loopback unless told otherwise."""

from __future__ import annotations

import ast
import gzip
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import uvicorn
from starlette.applications import Starlette

from pipelines.ces.auth import StaticTokenProvider
from pipelines.ces.client import CesMcpClient, tls_context
from pipelines.ces.errors import CesError, CesTransportError
from pipelines.ces.ratelimit import RateLimiter
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.cli import build_parser
from pipelines.config import CesSettings
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.paths import app_from_segment, app_segment
from pipelines.lake.store import Lake
from pipelines.warehouse.duck import Warehouse

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "ya29.a0-never-to-be-seen-4f9c2e71d3"
WRONG = "ya29.a0-wrong-and-secret-8b1d6a0c55"
SCALE = SimulatorScale(
    seed=23, apps=1, days=1, conversations_per_day=8, max_turns=2, evaluation_runs_per_app=2
)

# Debug logs of every library, written to a file, around the real CLI.
LOGGED_CLI = """
import logging, sys
logging.basicConfig(level=logging.DEBUG, filename=sys.argv[1], format="%(name)s %(levelname)s %(message)s")
from pipelines.cli import main
sys.exit(main(sys.argv[2:]))
"""


def readable_text(path: Path) -> bytes:
    """A file's content as a reader would see it: decompressed, Parquet and DuckDB decoded too."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        return gzip.decompress(raw)
    if path.suffix == ".parquet" and not path.name.startswith("."):
        return raw + repr(pq.read_table(path).to_pylist()).encode()
    if path.suffix == ".duckdb":
        with Warehouse(str(path)).connect(read_only=True) as conn:
            tables = [row[0] for row in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
            rows = [conn.execute(f'SELECT * FROM "{table}"').fetchall() for table in tables]
        return raw + repr(rows).encode()
    return raw


def files_holding(secret: str, folder: Path) -> list[str]:
    return [
        str(path.relative_to(folder))
        for path in sorted(folder.rglob("*"))
        if path.is_file() and secret.encode() in readable_text(path)
    ]


def test_the_token_never_reaches_files_logs_or_dagster(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "dagster_home", tmp_path / "dagster_home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))} | {
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
        "CES_LAKE": str(tmp_path / "lake"),
        "CES_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
        "CES_MAX_RPS": "1000",
    }
    window = ["--since", "2026-11-01", "--until", "2026-11-02"]
    config = SimulatorConfig(scale=SCALE, required_token=TOKEN, response_mode="mixed")
    with running_simulator(config) as sim:
        env |= {"CES_MCP_URL": sim.url, "CES_APPS": sim.apps[0]}
        good = subprocess.run(
            [sys.executable, "-c", LOGGED_CLI, str(tmp_path / "debug.log"), "ingest", *window],
            env=env | {"CES_ACCESS_TOKEN": f"{TOKEN}\n"},  # as a secret mounted from a file reads
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert good.returncode == 0, good.stderr
        bad = subprocess.run(
            [
                sys.executable,
                "-c",
                LOGGED_CLI,
                str(tmp_path / "refused.log"),
                "ingest",
                *window,
                "--skip-evaluations",
            ],
            env=env | {"CES_ACCESS_TOKEN": WRONG},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert bad.returncode != 0 and "401" in bad.stderr
    counts = Warehouse(str(tmp_path / "warehouse.duckdb")).row_counts()
    assert counts["conversations"] == SCALE.conversations_per_day and counts["evaluation_runs"] == 2
    log = (tmp_path / "debug.log").read_text()
    assert "tools/call list_conversations" in log and "httpcore" in log  # the debug logs did capture
    for secret in (TOKEN, WRONG):
        assert files_holding(secret, tmp_path) == []
        for output in (good.stdout, good.stderr, bad.stdout, bad.stderr):
            assert secret not in output
    # the runs' event logs (their messages, metadata and errors) were among the files searched
    assert any((tmp_path / "dagster_home" / "history").rglob("*.db")), "Dagster stored nothing to search"


def test_a_token_the_http_library_refuses_to_send_is_shown_nowhere() -> None:
    """h11 refuses a header value with a line break and quotes it in its message: the
    error the user sees, its traceback included, holds no part of the token."""
    token = "tok-\n-do-not-show-me"
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        settings = CesSettings(mcp_url=sim.url, access_token=token, max_rps=1000)
        with CesMcpClient(settings) as client, pytest.raises(CesError, match="cannot send") as info:
            client.call_tool("list_conversations", {"parent": sim.apps[0]})
    shown = "".join(traceback.format_exception(info.value))
    assert "do-not-show-me" not in shown and "***" in shown


# -- names from the API are data, never paths ----------------------------------------------------


@pytest.mark.parametrize(
    "app",
    [
        "projects/../locations/../apps/..",
        "projects/./locations/./apps/.",
        "projects/%2e%2e/locations/x/apps/%2F..%2Fetc",
        "projects/p/locations/l/apps/a.b..c",
        "projects/p\\..\\..\\x/locations/l/apps/a",
    ],
)
def test_app_names_stay_one_segment_under_the_lake_root(app: str, tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    segment = app_segment(app)
    assert "/" not in segment and ".." not in segment and app_from_segment(segment) == app
    for path in (
        lake.raw_path("conversations", app, date(2026, 11, 1)),
        lake.table_path("spans", app, date(2026, 11, 1)),
    ):
        assert Path(os.path.normpath(path)).is_relative_to(tmp_path / "lake")
    written = lake.write_observation("evaluation_runs", app, "20261101T000000000000Z", [{"x": 1}])
    assert Path(written.path).resolve().is_relative_to((tmp_path / "lake").resolve())


@pytest.mark.parametrize("app", ["/etc/passwd", "../../../etc", "projects/p/locations/l/apps/a/../../x", ""])
def test_names_that_are_not_app_names_are_refused(app: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an app resource name"):
        Lake(str(tmp_path)).raw_path("conversations", app, date(2026, 11, 1))


@pytest.mark.parametrize("key", ["../../../../tmp/escaped", "/etc/passwd", "..", "a/b\\c\0d"])
def test_state_keys_from_the_api_stay_inside(key: str, tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    path = Path(lake.write_state("started_evaluation_runs", key, {"evaluation_run": key}))
    assert path.resolve().parent == (tmp_path / "lake" / "state" / "started_evaluation_runs").resolve()
    assert lake.read_states("started_evaluation_runs") == [{"evaluation_run": key}]


def test_hostile_conversation_names_are_data_not_paths_or_sql(tmp_path: Path) -> None:
    app = SCALE.app_names[0]
    day = SCALE.start_date
    injection = f"{app}/conversations/x'); DROP TABLE spans; --"
    traversal = f"{app}/conversations/../../../../../../tmp/escaped"
    absolute = "/etc/passwd"
    conversations = [
        {"name": name, "startTime": "2026-11-01T10:00:00Z", "turns": [{"rootSpan": {"name": "Turn"}}]}
        for name in (injection, traversal, absolute)
    ]
    lake = Lake(str(tmp_path / "lake"))
    record = {"tool": "list_conversations", "arguments": {}, "result": {"conversations": conversations}}
    lake.write_raw(CONVERSATIONS_DATASET, app, day, [record])
    flattened = flatten_conversation_partition(lake, app, day)
    warehouse = Warehouse(str(tmp_path / "warehouse.duckdb"))
    load_conversation_partitions(lake, warehouse, [(app, day)])
    assert flattened.rejects == 2
    with warehouse.connect(read_only=True) as conn:
        assert conn.execute("SELECT conversation_name FROM conversations").fetchall() == [(injection,)]
        assert conn.execute("SELECT count(*) FROM spans").fetchone() == (1,)
        rejected = sorted(conn.execute("SELECT resource_name, reason FROM rejects").fetchall())
    assert [name for name, _ in rejected] == sorted([traversal, absolute])
    outside = [p for p in tmp_path.parent.rglob("escaped*")] + list(Path("/tmp").glob("escaped*"))
    assert outside == []


def test_sql_text_never_holds_values() -> None:
    """Every statement comes from sql/ or a literal; `.format` fills in identifiers only (and, in
    the statements DuckDB binds no parameters in, string literals quoted by `quoted`; `rollup`:
    the SELECT of a sql/rollups/ file, whose values are bound parameters too; `columns`: a
    table's columns from the schema registry; `temporary`: TEMP or nothing; `variable`: a named
    query's parameter's session variable, from its declared name; `value`: its parsed value as a
    typed literal, `typed_literal`; `database`: the connection's own database, a quoted
    identifier; `macro`, `chosen`: a macro's or a temporary table's name; `sources`, `files`: the
    text of other sql/ files, or a bound parameter's name; `block_size`: the constant
    `publish.BLOCK_SIZE`)."""
    identifier_slots = {
        "table",
        "relation",
        "key",
        "rollup",
        "columns",
        "temporary",
        "variable",
        "database",
        "macro",
        "chosen",
        "sources",
        "files",
        "block_size",
    }
    problems = []
    for path in sorted((ROOT / "pipelines").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if node.func.attr in ("execute", "sql") and node.args:
                statement = node.args[0]
                if isinstance(statement, ast.JoinedStr | ast.BinOp):
                    problems.append(f"{where}: SQL built from an expression")
            if node.func.attr == "format" and "sql_text" in ast.unparse(node.func.value):
                # a slot holds an identifier, or a literal quoted where DuckDB binds nothing (ATTACH)
                slots = {
                    keyword.arg
                    for keyword in node.keywords
                    if not ast.unparse(keyword.value).startswith(("quoted(", "typed_literal("))
                }
                if node.args or not slots <= identifier_slots:
                    problems.append(f"{where}: SQL template filled with {slots or 'positional values'}")
    assert problems == []


# -- TLS and where the simulator listens -----------------------------------------------------------


@pytest.fixture
def self_signed_https(tmp_path: Path) -> Iterator[str]:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert)),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        Starlette(), log_level="critical", lifespan="off", ssl_keyfile=str(key), ssl_certfile=str(cert)
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"https://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_tls_certificates_are_verified(self_signed_https: str) -> None:
    settings = CesSettings(mcp_url=self_signed_https, max_attempts=1)
    no_token = StaticTokenProvider(None)
    with (
        CesMcpClient(settings, rate_limiter=RateLimiter(100), token_provider=no_token) as client,
        pytest.raises(CesTransportError, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        client.call_tool("list_conversations", {})


def test_clients_share_one_tls_context_that_verifies() -> None:
    """Each partition's client reuses the process's TLS context rather than parsing the CA
    bundle again, and that context still checks certificates and host names."""
    settings = CesSettings(mcp_url="https://ces.googleapis.com/mcp")
    with (
        CesMcpClient(settings, token_provider=StaticTokenProvider(None)) as first,
        CesMcpClient(settings, token_provider=StaticTokenProvider(None)) as second,
    ):
        used = [client._http._transport._pool._ssl_context for client in (first, second)]
    assert used[0] is used[1] is tls_context()
    assert tls_context().verify_mode is ssl.CERT_REQUIRED and tls_context().check_hostname


def test_nothing_turns_verification_off() -> None:
    sources = {path: path.read_text() for path in (ROOT / "pipelines").rglob("*.py")}
    assert [str(p) for p, text in sources.items() if "verify=False" in text or "CERT_NONE" in text] == []


def test_the_simulator_listens_on_loopback_unless_told_otherwise() -> None:
    assert build_parser().parse_args(["simulate"]).host == "127.0.0.1"
    with running_simulator(SimulatorConfig(scale=SCALE)) as sim:
        assert sim.url.startswith("http://127.0.0.1:")
