"""Loads write a private copy of the warehouse file, then rename it over the file readers open.

A BI tool holding `CES_WAREHOUSE` open read-only keeps DuckDB's shared lock on it, which a writer
of that file cannot take: so no load writes it in place. A load copies it to a working file,
writes there, checkpoints, and renames the result over the published path in one step. A reader
that opened the file before keeps the state it opened; one that opens after sees the whole load.
No reader ever waits, and no load waits for a reader. The cost is one copy of the file per load
(none on XFS or btrfs, whose copy shares its blocks: `copy_file`), which is why the conversation
tables live outside it (`pipelines.warehouse.parts`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines import stop
from pipelines.durable import fsync_directory
from pipelines.errors import ActionableError
from pipelines.sqlfiles import quoted, sql_text
from pipelines.warehouse.lock import WarehouseBusyError

PARTS_SUFFIX = ".parts"
"""The folder beside a warehouse file that holds its conversation tables' parts and its versions."""
VERSIONS = "versions"
WORKING_SUFFIX = ".loading"
"""The working copy sits beside the published file (same filesystem, so the rename is atomic)."""
BLOCK_SIZE = 65_536
"""DuckDB's block, in bytes, of the warehouse file (its own default: 256 KB). Each table a load
appends to holds its new rows in a block per column until the checkpoint: the rollups' columns,
when the file held them, took 60 MB of a load's memory for a few hundred rows in 256 KB blocks,
and the copy every load writes carried each table's part-filled blocks. Below 64 KB, DuckDB stores integers
unpacked (no bit-packing; doubles are compressed in 256 KB blocks only): the 2M bench's file was
70 MB in 16 KB blocks, 50 MB in 64 KB ones, with the same memory. Readers need DuckDB 1.2 or
newer for any block size but the default, which files written by DuckDB 1.5 already ask for."""


def next_version(conn: duckdb.DuckDBPyConnection) -> int:
    """The number the file being written will be published under."""
    rows = conn.execute(sql_text("parts/publication_times.sql")).fetchall()
    return (rows[-1][0] if rows else 0) + 1


def record_publication(conn: duckdb.DuckDBPyConnection) -> int:
    """Number the file being written (`next_version`), as the last step before it is published."""
    conn.execute(sql_text("parts/create_manifest.sql"))  # a write that set up no schema yet
    ((version,),) = conn.execute(sql_text("parts/record_publication.sql")).fetchall()
    return int(version)


class WarehouseFileError(ActionableError, RuntimeError):
    """The warehouse file cannot be opened as it is, or published: a write-ahead log a newer load
    would orphan."""


_DAMAGED = ("not a valid DuckDB database file", "Corrupt database file", "Could not read enough bytes")
"""DuckDB's words for a file that is not whole: cut short, overwritten, or not a database."""


def open_refused(path: str, refusal: Exception) -> ActionableError:
    """DuckDB's refusal to open `path`, with what to do: another program's lock on it (one that
    opened it read-write), a damaged file (made again from the lake), or what is wrong with the
    path itself."""
    if "lock on file" in str(refusal):
        return WarehouseBusyError(
            f"cannot open {path}: {refusal}. Is it open for writing in another program? BI tools open "
            'it read-only (see docs/warehouse.md, "Connect a BI tool").'
        )
    if any(words in str(refusal) for words in _DAMAGED):
        return WarehouseFileError(
            f"cannot open {path}: {refusal}. The file is damaged: move it aside and make it again from "
            "the lake, which keeps every response: `ces-pipeline rebuild`."
        )
    return WarehouseFileError(f"cannot open {path}: {refusal}")


def _wal_path(path: str) -> str:
    return f"{path}.wal"


@dataclass
class WorkingCopy:
    path: str
    version: int | None = None
    """Set by the writer: the file is also linked as `<versions>/<version>.duckdb`."""


@contextmanager
def working_copy(path: str, versions: Path, config: Mapping[str, str | int]) -> Iterator[WorkingCopy]:
    """A private copy of the warehouse at `path` (a new file if there is none) to write; published
    over `path` when the block succeeds, discarded when it fails. Callers hold the write lock;
    `config`: the load's DuckDB settings (its memory limit), for a copy written again."""
    _checkpoint_in_place(path)
    working = WorkingCopy(f"{path}{WORKING_SUFFIX}")
    _remove(working.path)  # what a killed load left
    if os.path.exists(path):
        _copy(path, working.path, config)
    try:
        yield working
        if os.path.exists(_wal_path(working.path)):
            raise WarehouseFileError(f"{working.path} kept a write-ahead log after its last checkpoint")
        with open(working.path, "rb+") as handle:
            os.fsync(handle.fileno())
        if working.version is not None:
            _link_version(working.path, versions, working.version)
        os.replace(working.path, path)
    except BaseException:
        _remove(working.path)
        raise
    fsync_directory(os.path.dirname(os.path.abspath(path)))


def _copy(path: str, working: str, config: Mapping[str, str | int]) -> None:
    """The published file, byte for byte; or, once, its contents written again in `BLOCK_SIZE`
    blocks, every table, view, macro and comment with them: a file written before they were the
    warehouse's, or one mostly free (`MOSTLY_FREE`)."""
    try:
        with stop.interruptible(duckdb.connect(path, read_only=True)) as conn:
            ((block_size, used),) = conn.execute(sql_text("warehouse/file_blocks.sql")).fetchall()
    except duckdb.IOException as exc:
        raise open_refused(path, exc) from exc
    if block_size == BLOCK_SIZE and os.path.getsize(path) <= MOSTLY_FREE * used * block_size:
        copy_file(path, working)
        return
    with stop.interruptible(duckdb.connect(config=dict(config))) as conn:
        conn.execute(
            sql_text("warehouse/rewrite_in_blocks.sql").format(
                source=quoted(path), target=quoted(working), block_size=BLOCK_SIZE
            )
        )


MOSTLY_FREE = 3
"""A file more than this many times the size of its blocks in use is written anew by the next load.
DuckDB reuses a file's free blocks, and gives back only those at its end, and every load copies
the rest: a file whose tables moved out (the rollups, into parts: 64 MB at 2M conversations,
three quarters of it then free) would be copied whole by every load for good. After a load's
checkpoint a third to half of the file is free (the row groups it rewrote), so this takes only
such a move."""


def copy_file(source: str, target: str) -> None:
    """`source` copied to `target` by `copy_file_range`, which lets the filesystem share the blocks
    instead of writing them: on XFS and btrfs a load then writes only the blocks it changes (a
    64 MB warehouse file cloned in 1 ms, 0 bytes written, against 64 MB by `shutil.copyfile`);
    elsewhere it copies in the kernel as `shutil.copyfile` does. Where the call is missing (not
    Linux) or refused before a byte is copied (a filesystem without it): `shutil.copyfile`."""
    copy_range = getattr(os, "copy_file_range", None)
    if copy_range is not None:
        with open(source, "rb") as reader, open(target, "wb") as writer:
            size, copied = os.fstat(reader.fileno()).st_size, 0
            try:
                while copied < size:
                    step = copy_range(reader.fileno(), writer.fileno(), size - copied)
                    if step == 0:
                        raise OSError(errno.EIO, f"{source} ended after {copied} of {size} bytes")
                    copied += step
                return
            except OSError as exc:
                if copied or exc.errno not in _REFUSED:
                    raise
    shutil.copyfile(source, target)


_REFUSED = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}
"""What `copy_file_range` answers where the filesystem or a sandbox does not offer it."""


def _checkpoint_in_place(path: str) -> None:
    """A file left with a write-ahead log (a load killed by an older version) gets it folded in
    first: a copy without its log would lose committed rows, and the log beside a new file would
    be replayed onto the wrong data."""
    if not os.path.exists(_wal_path(path)):
        return
    try:
        duckdb.connect(path).close()  # opening replays the log; closing checkpoints it
    except duckdb.IOException as exc:
        raise WarehouseFileError(
            f"{path} has an unapplied write-ahead log ({_wal_path(path)}) and is open in another program: "
            f"close it once so that the next load can apply the log. DuckDB said: {exc}"
        ) from exc


def _remove(working: str) -> None:
    for leftover in (working, _wal_path(working)):
        with contextlib.suppress(FileNotFoundError):
            os.remove(leftover)


def _link_version(working: str, versions: Path, version: int) -> None:
    """A second name for the file about to be published, by which a later load finds whether
    readers still hold it once it is replaced (`garbage.collect_garbage`)."""
    versions.mkdir(parents=True, exist_ok=True)
    link = versions / f"{version:010d}.duckdb"
    with contextlib.suppress(FileNotFoundError):
        link.unlink()  # a number a publication that failed after linking had taken
    os.link(working, link)
