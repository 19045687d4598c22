"""Deleting the parts no reader can read any more: a part replaced by a load stays on disk
while a reader holds a published file that lists it (DuckDB's lock on the file's link under
`<file>.parts/versions/`), so that a BI tool's snapshot never loses a file under it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import time
from pathlib import Path

import duckdb

from pipelines.sqlfiles import sql_text
from pipelines.warehouse.publish import VERSIONS

GRACE_SECONDS = 60.0
"""A file replaced this long ago is checked for readers: one that opened it just before it was
replaced has taken DuckDB's lock on it well within this time."""


def collect_garbage(conn: duckdb.DuckDBPyConnection, root: Path) -> int:
    """Delete the parts no reader can read any more, and forget the files no reader holds; the
    parts deleted. A replaced file is held while a DuckDB connection has it open (its lock)."""
    published = dict(conn.execute(sql_text("parts/publication_times.sql")).fetchall())
    if not published:
        return 0
    current = max(published)
    now = time.time()
    held = [current]
    for link in sorted((root / VERSIONS).glob("*.duckdb")):
        version = int(link.stem)
        replaced_at = published.get(version + 1)
        if version >= current or replaced_at is None:
            continue
        if now - replaced_at.timestamp() < GRACE_SECONDS or _has_readers(link):
            held.append(version)
        else:
            link.unlink()
    oldest = min(held)
    files = conn.execute(sql_text("parts/collectable_parts.sql"), {"oldest_held": oldest}).fetchall()
    for (file,) in files:
        with contextlib.suppress(FileNotFoundError):
            (root / file).unlink()
    conn.execute(sql_text("parts/forget_collected_parts.sql"), {"oldest_held": oldest})
    conn.execute(sql_text("parts/forget_publications.sql"), {"version": oldest})
    return len(files)


_WRITE_LOCK = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)


def _has_readers(path: Path) -> bool:
    """Whether a DuckDB connection, in any process, this one included, has the file open: an open
    file description lock conflicts with its lock (a process's own would not: macOS, without
    them, misses this process's readers)."""
    fd = os.open(path, os.O_RDWR)
    try:
        if hasattr(fcntl, "F_OFD_SETLK"):
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _WRITE_LOCK)
        else:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        return False
    finally:
        os.close(fd)
