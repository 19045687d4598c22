"""A throwaway PostgreSQL server for the scale-out tests: Debian's server binaries, a cluster in a
temporary folder, listening on a free loopback port, stopped and deleted afterwards."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def _binaries() -> str | None:
    """The folder of `initdb` and `pg_ctl` (Debian keeps them out of PATH)."""
    found = shutil.which("pg_ctl")
    if found:
        return os.path.dirname(os.path.realpath(found))
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return os.path.dirname(versions[-1]) if versions else None


@contextmanager
def postgres_server() -> Iterator[str]:
    """A running server; yields its libpq connection string (user postgres, no password)."""
    binaries = _binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    # The server refuses to run as root: as root, run it as the postgres user.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="ces-pg-")
    if as_user:
        shutil.chown(folder, "postgres", "postgres")
    data = os.path.join(folder, "data")

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True, timeout=120)

    try:
        run(f"{binaries}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200"
        run(f"{binaries}/pg_ctl", "-D", data, "-o", options, "-l", f"{folder}/server.log", "-w", "start")
        try:
            yield f"dbname=postgres host=127.0.0.1 port={port} user=postgres"
        finally:
            run(f"{binaries}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def create_database(conninfo: str, name: str) -> str:
    """A new database on the server of `conninfo`; its connection string."""
    subprocess.run(
        ["psql", conninfo, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True, timeout=60
    )
    return conninfo.replace("dbname=postgres", f"dbname={name}")
