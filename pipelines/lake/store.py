"""Reading and writing the lake through fsspec, so `CES_LAKE` may be local, `gs://` or `s3://`."""

from __future__ import annotations

import contextlib
import glob
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO, Any

import fsspec
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from isal import igzip

from pipelines.durable import fsync_directory
from pipelines.errors import ActionableError
from pipelines.lake.paths import app_from_segment, app_segment, partition_dir
from pipelines.protojson import deepjson
from pipelines.transform.schemas import TableSpec

RAW_FILE = "records.jsonl.gz"
TABLE_FILE = "part-0.parquet"
ROW_GROUP_BYTES = 2_000_000
"""Arrow bytes of a table's batches gathered before they are written as one row group: each
row group writes every column as a chunk of its own, whatever its size, so a small table's
batch alone would be mostly that overhead; a writer holds at most this much per table."""
RAW_GZIP_LEVEL = 2
"""ISA-L level of raw files (0-3): plain gzip files, written and read back much faster than
with zlib for a slightly larger file."""
_PARTITION = re.compile(r"app=([^/]+)/date=(\d{4}-\d{2}-\d{2})$")
_OBSERVATION = re.compile(r"app=([^/]+)/fetched=([0-9TZ]+)\.jsonl\.gz$")
_KEY = re.compile(r"[^A-Za-z0-9_-]")


def _safe_key(key: str) -> str:
    """A document key as one harmless file name."""
    return _KEY.sub(lambda m: f"%{ord(m.group()):02X}", key)[:200]


@dataclass(frozen=True)
class WrittenFile:
    path: str
    rows: int
    bytes: int


class JsonLinesWriter:
    """Lines into an open gzip JSON Lines file."""

    def __init__(self, stream: IO[bytes], path: str):
        self._stream, self.path = stream, path
        self.rows = 0

    def write(self, line: bytes) -> None:
        """One JSON text, without its newline."""
        self._stream.write(line)
        self._stream.write(b"\n")
        self.rows += 1


class LakeAccessError(ActionableError):
    """The lake's storage refused a listing: no bucket, no credentials, no endpoint."""


class Lake:
    def __init__(self, root: str):
        self.fs, self.root = fsspec.core.url_to_fs(root)
        self.root = self.root.rstrip("/")
        self.protocol = self.fs.protocol if isinstance(self.fs.protocol, str) else self.fs.protocol[0]

    @property
    def is_local(self) -> bool:
        return self.protocol in ("file", "local")

    def url(self, path: str) -> str:
        """A path usable outside fsspec (DuckDB, users): local paths stay plain."""
        return path if self.is_local else f"{self.protocol}://{path}"

    def _glob(self, pattern: str) -> list[str]:
        """`fs.glob`, a failure said in one line: an object store's client raises its own types
        (a missing bucket as FileNotFoundError, no credentials as botocore's), not the caller's."""
        try:
            return self.fs.glob(pattern)
        except Exception as exc:
            raise LakeAccessError(
                f"cannot list the lake {self.url(self.root)}: {type(exc).__name__}: {exc}"
            ) from exc

    # -- raw API records ----------------------------------------------------------------------

    def raw_path(self, dataset: str, app: str, day: date) -> str:
        return f"{self.root}/{partition_dir('raw', dataset, app=app, day=day)}/{RAW_FILE}"

    def write_raw(self, dataset: str, app: str, day: date, records: Iterable[dict[str, Any]]) -> WrittenFile:
        """Stream records into one gzip JSON Lines file, replacing the partition atomically."""
        return self._write_jsonl(self.raw_path(dataset, app, day), records)

    def raw_writer(self, dataset: str, app: str, day: date) -> AbstractContextManager[JsonLinesWriter]:
        """A writer of one raw partition's lines, replacing it only when the block succeeds."""
        return self._jsonl_writer(self.raw_path(dataset, app, day))

    def read_raw_lines(self, dataset: str, app: str, day: date) -> Iterator[bytes]:
        """The JSON lines of one raw partition, undecoded (for a reader with its own decoder)."""
        return self._lines(self.raw_path(dataset, app, day))

    def raw_partitions(self, dataset: str, apps: Sequence[str] = ()) -> list[tuple[str, date]]:
        """Every (app, day) with raw records (of `apps` only, when given: their folders alone are
        listed), sorted, from one listing per app or of all (a request each on an object store)."""
        found = set()
        for segment in [app_segment(app) for app in apps] or ["*"]:
            for path in self._glob(f"{self.root}/raw/{dataset}/app={segment}/date=*/{RAW_FILE}"):
                match = _PARTITION.search(path.rsplit("/", 1)[0])
                if match:
                    found.add((app_from_segment(match.group(1)), date.fromisoformat(match.group(2))))
        return sorted(found)

    # -- observations: raw records that accumulate rather than replace --------------------------

    def write_observation(
        self, dataset: str, app: str, stamp: str, records: Iterable[dict[str, Any]]
    ) -> WrittenFile:
        """One fetch's records, kept next to every earlier fetch: `stamp` orders them."""
        path = f"{self.root}/raw/{dataset}/app={app_segment(app)}/fetched={stamp}.jsonl.gz"
        return self._write_jsonl(path, records)

    def observations(self, dataset: str) -> list[tuple[str, str]]:
        """(app, path) of every observation file, oldest first."""
        found = []
        for path in self._glob(f"{self.root}/raw/{dataset}/app=*/fetched=*.jsonl.gz"):
            match = _OBSERVATION.search(path)
            if match:
                found.append((match.group(2), app_from_segment(match.group(1)), path))
        return [(app, path) for _, app, path in sorted(found)]

    def read_jsonl(self, path: str) -> Iterator[dict[str, Any]]:
        return (deepjson.loads(line) for line in self._lines(path))

    def _lines(self, path: str) -> Iterator[bytes]:
        with self.fs.open(path, "rb") as handle, igzip.GzipFile(fileobj=handle) as gz:
            yield from (line for line in gz if line.strip())

    # -- small state documents ----------------------------------------------------------------

    def write_state(self, kind: str, key: str, document: dict[str, Any]) -> str:
        path = f"{self.root}/state/{kind}/{_safe_key(key)}.json"
        with self._atomic(path) as handle:
            handle.write(orjson.dumps(document))
        return path

    def read_states(self, kind: str) -> list[dict[str, Any]]:
        documents = []
        for path in sorted(self._glob(f"{self.root}/state/{kind}/*.json")):
            with self.fs.open(path, "rb") as handle:
                documents.append(orjson.loads(handle.read()))
        return documents

    def settle_state(self, kind: str, key: str) -> None:
        """Move a document to `state/KIND/done/`: kept as a record, no longer read by `read_states`."""
        name, done = f"{_safe_key(key)}.json", f"{self.root}/state/{kind}/done"
        if self.is_local:
            self.fs.makedirs(done, exist_ok=True)
        self.fs.mv(f"{self.root}/state/{kind}/{name}", f"{done}/{name}")

    # -- flattened tables ---------------------------------------------------------------------

    def table_path(self, table: str, app: str, day: date) -> str:
        return f"{self.root}/{partition_dir('tables', table, app=app, day=day)}/{TABLE_FILE}"

    @contextmanager
    def table_writer(self, spec: TableSpec, app: str, day: date) -> Iterator[TableWriter]:
        """A Parquet writer for one table partition; the file appears only when the block succeeds."""
        path = self.table_path(spec.name, app, day)
        with self._atomic(path) as handle:
            writer = TableWriter(spec, handle, path)
            try:
                yield writer
            finally:
                writer.close()

    # -- atomic replacement -------------------------------------------------------------------

    def _write_jsonl(self, path: str, records: Iterable[dict[str, Any]]) -> WrittenFile:
        with self._jsonl_writer(path) as writer:
            for record in records:
                writer.write(deepjson.dumps(record))  # deepjson: a deep trace nests past orjson's limit
        return WrittenFile(path, writer.rows, self.fs.size(path))

    @contextmanager
    def _jsonl_writer(self, path: str) -> Iterator[JsonLinesWriter]:
        with (
            self._atomic(path) as handle,
            igzip.GzipFile(fileobj=handle, mode="wb", compresslevel=RAW_GZIP_LEVEL, mtime=0) as gz,
        ):
            yield JsonLinesWriter(gz, path)

    @contextmanager
    def _atomic(self, path: str) -> Iterator[IO[bytes]]:
        """Readers never see a cut-off file. Locally: a hidden temporary sibling (readers skip it),
        fsynced and renamed over `path`. On an object store: a local temporary file uploaded whole
        once complete (an object appears only when its upload completes, and a rename there is a
        copy), so a writer killed mid-file leaves the old object. Either way, what a killed writer
        left is deleted by a later write of the same name once it is stale."""
        directory, name = path.rsplit("/", 1)
        if not self.is_local:
            staging = Path(tempfile.gettempdir()) / f"ces-pipeline-uploads-{os.getuid()}"
            staging.mkdir(mode=0o700, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=staging, prefix=f".{name}.", suffix=".tmp") as handle:
                yield handle
                handle.flush()
                self.fs.put_file(handle.name, path)
            _remove_stale_temps(str(staging), name)
            return
        self.fs.makedirs(directory, exist_ok=True)
        temp = f"{directory}/.{name}.{uuid.uuid4().hex}.tmp"
        try:
            with self.fs.open(temp, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            self.fs.mv(temp, path)
            fsync_directory(directory)
            _remove_stale_temps(directory, name)
        except BaseException:
            if self.fs.exists(temp):
                self.fs.rm(temp)
            raise


STALE_TEMP_SECONDS = 3600.0
"""A temporary file older than this was left by a writer that crashed (no write takes an hour)."""


def _remove_stale_temps(directory: str, name: str) -> None:
    cutoff = time.time() - STALE_TEMP_SECONDS
    for stale in Path(directory).glob(f".{glob.escape(name)}.*.tmp"):
        with contextlib.suppress(OSError):
            if stale.stat().st_mtime < cutoff:
                stale.unlink()


class TableWriter:
    """Streams record batches of one table into a zstd Parquet file, in row groups of `ROW_GROUP_BYTES`."""

    def __init__(self, spec: TableSpec, handle: IO[bytes], path: str):
        self.spec = spec
        self.path = path
        self.rows = 0
        self._writer = pq.ParquetWriter(handle, spec.schema, compression="zstd")
        self._pending: list[pa.RecordBatch] = []
        self._pending_bytes = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self._pending.append(batch)
            self._pending_bytes += batch.nbytes
            self.rows += batch.num_rows
            if self._pending_bytes >= ROW_GROUP_BYTES:
                self._write_row_group()

    def close(self) -> None:
        self._write_row_group()
        self._writer.close()

    def _write_row_group(self) -> None:
        if self._pending:
            self._writer.write_table(pa.Table.from_batches(self._pending, schema=self.spec.schema))
            self._pending, self._pending_bytes = [], 0
