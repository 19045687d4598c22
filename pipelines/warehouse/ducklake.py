"""A DuckLake warehouse, `CES_WAREHOUSE=ducklake:<catalog>`: many writers and readers at once.

The catalog is a database (PostgreSQL, SQLite or a DuckDB file) that records every table's
Parquet data files and every committed snapshot; the data files lie under a data path. Each
connection is an in-memory DuckDB with the lake attached as `warehouse` and made the default, so
every statement of `sql/` runs unchanged against its schema `main`. A transaction reads one
snapshot and commits a new one: a reader sees whole loads only, and two loads of different
partitions commit side by side. Two transactions that change the same data conflict at commit;
`CONFLICT_ATTEMPTS` retries of the whole load settle it.
"""

from __future__ import annotations

import os
import re
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

import duckdb

from pipelines import stop
from pipelines.config import LIBPQ_KEEPALIVES, keepalives_set, libpq_connect_timeout_set, s3_endpoint_url
from pipelines.errors import ActionableError
from pipelines.sqlfiles import quoted, sql_text

PREFIX = "ducklake:"
CATALOG_EXTENSIONS = {"postgres:": "postgres_scanner", "sqlite:": "sqlite_scanner"}
"""The DuckDB extension each kind of catalog needs besides `ducklake` (a DuckDB file: none)."""
CONFLICT_ATTEMPTS = 5
CATALOG_CONNECT_TIMEOUT = 10
"""Seconds a PostgreSQL catalog may take to answer a new connection unless its conninfo's
`connect_timeout` or PGCONNECT_TIMEOUT says otherwise. libpq's own default is to wait forever,
and its wait is one blocking call that Ctrl-C cannot end: a catalog server that takes the
connection and never answers (hung, or behind a firewall that drops its packets) would hang the
command, Ctrl-C included."""
_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")
INITIALIZE_ATTEMPTS = 3
SNAPSHOTS_KEPT = "1 hour"
"""How long a DuckLake's snapshots outlive the next one (`maintain`): longer than any reader's
transaction, since time travel is not what this warehouse offers."""
FILES_KEPT = "1 day"
"""How long a file no kept snapshot reads stays on disk before `maintain` deletes it."""
PACKAGED_LOADS = {"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false"}
"""How a connection starts: DuckDB checks an extension's signature on every load, hashing the
whole file: 0.1 s for each 20-40 MB extension, again for each new database, so 0.2-0.3 s of each
connection here (a quarter of a `query` on a DuckLake). The files of the `duckdb-extension-*`
packages are as trusted as the `duckdb` package beside them, so they load unchecked;
`_load_extensions` then turns the checks on for the rest of the connection, and no extension is
downloaded meanwhile."""
OPTIONS = {"parquet_compression": "zstd"}
"""The lake-wide DuckLake options every writer sets: data files compressed as the raw lake's and a
DuckDB file's parts are (with DuckLake's default, snappy, a one-app-day load wrote its 0.43 MB of
Parquet rows as 0.60 MB of data files). Set on each attach that writes, since an attached lake
keeps the options it found when attached: one set by another process since is not applied."""


class DuckLakeSetupError(ActionableError, RuntimeError):
    """The DuckLake extensions are missing, or the catalog cannot be attached."""


class DuckLakeMissingError(DuckLakeSetupError):
    """A reader found no DuckLake at the catalog: no load has created it yet."""


def is_ducklake(target: str) -> bool:
    return target.startswith(PREFIX)


def catalog_file(target: str) -> str | None:
    """The local file of a SQLite or DuckDB-file catalog (None for PostgreSQL)."""
    catalog = target.removeprefix(PREFIX)
    if catalog.startswith("postgres:"):
        return None
    return catalog.removeprefix("sqlite:")


@contextmanager
def attach(
    target: str, data_path: str, *, read_only: bool, config: Mapping[str, str | int] | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB connection (DuckDB settings `config`) with the lake at `target`
    attached as the default database."""
    catalog = target.removeprefix(PREFIX)
    extensions = ["ducklake"]
    extensions += [name for prefix, name in CATALOG_EXTENSIONS.items() if catalog.startswith(prefix)]
    if data_path.startswith("s3://"):
        extensions.append("httpfs")  # which reads the AWS_* credentials and region itself
    with stop.interruptible(duckdb.connect(config=dict(config or {}) | PACKAGED_LOADS)) as conn:
        _load_extensions(conn, extensions)
        if data_path.startswith("s3://"):
            if endpoint := s3_endpoint_url():  # an S3-compatible server, reached with path-style URLs
                url = urllib.parse.urlsplit(endpoint)
                use_ssl = quoted(str(url.scheme == "https").lower())
                secret = sql_text("warehouse/create_s3_secret.sql")
                conn.execute(secret.format(endpoint=quoted(url.netloc), use_ssl=use_ssl))
            # A file being uploaded holds one part in the buffer pool: parts of 5 MB (S3's least;
            # files up to 50 GB) instead of 80 MB keep a load within CES_WAREHOUSE_MEMORY_LIMIT.
            conn.execute("SET s3_uploader_max_filesize = '50GB'")
        elif "://" in data_path:
            scheme = data_path.split("://")[0]
            raise DuckLakeSetupError(
                f"a DuckLake keeps its data files on a local path or s3://, not {scheme}://: "
                "set CES_WAREHOUSE_DATA_PATH"
            )
        if not read_only and (file := catalog_file(target)):
            os.makedirs(os.path.dirname(os.path.abspath(file)), exist_ok=True)
        attach_sql = sql_text("warehouse/attach_ducklake.sql").format(
            target=quoted(bounded_connect(target)),
            data_path=quoted(data_path),
            read_only=quoted(str(read_only).lower()),
        )
        for attempt in range(1, INITIALIZE_ATTEMPTS + 1):
            try:
                conn.execute(attach_sql)
                break
            except duckdb.Error as exc:
                # Two processes that find a new catalog both create its tables; one of them fails
                # and then finds the catalog made.
                if "initialize DuckLake" in str(exc) and attempt < INITIALIZE_ATTEMPTS:
                    time.sleep(0.2 * attempt)
                    continue
                if read_only and "creating a new DuckLake is explicitly disabled" in str(exc):
                    raise DuckLakeMissingError(
                        f"there is no DuckLake warehouse at {shown(target)} yet: the first load creates it"
                    ) from None
                raise DuckLakeSetupError(  # DuckDB's own message names the password: hidden, unchained
                    f"cannot attach the DuckLake warehouse {shown(target)}: {shown(str(exc))}"
                ) from None
        conn.execute("USE warehouse")
        if not read_only:
            for name, value in OPTIONS.items():  # no snapshot: a row of the catalog's metadata
                conn.execute(sql_text("warehouse/ducklake_set_option.sql"), {"name": name, "value": value})
        conn.execute("SET TimeZone = 'UTC'")
        yield conn


def bounded_connect(target: str) -> str:
    """`target` with `connect_timeout` (`CATALOG_CONNECT_TIMEOUT`) and TCP keepalives
    (`LIBPQ_KEEPALIVES`) in a PostgreSQL catalog's conninfo, key=value pairs or a URI, each unless
    the conninfo (or, for the timeout, PGCONNECT_TIMEOUT) sets it."""
    catalog = target.removeprefix(PREFIX)
    if not catalog.startswith("postgres:"):
        return target
    added: dict[str, int] = {}
    if "connect_timeout" not in catalog and not libpq_connect_timeout_set():
        added["connect_timeout"] = CATALOG_CONNECT_TIMEOUT
    if not keepalives_set(catalog):
        added |= LIBPQ_KEEPALIVES
    if not added:
        return target
    if catalog.startswith(("postgres:postgresql://", "postgres:postgres://")):
        return f"{target}{'&' if '?' in catalog else '?'}{urllib.parse.urlencode(added)}"
    return " ".join([target, *(f"{key}={value}" for key, value in added.items())])


@dataclass(frozen=True)
class LakeState:
    snapshots: int
    data_files: int
    delete_files: int


def maintain(
    conn: duckdb.DuckDBPyConnection, snapshots_kept: str = SNAPSHOTS_KEPT, files_kept: str = FILES_KEPT
) -> tuple[LakeState, LakeState]:
    """Run DuckLake's own maintenance on the attached lake, which never expires a snapshot nor
    deletes a file by itself: every hourly load would otherwise keep the files it replaced, and
    its rows inlined in the catalog, for ever. The state before and after.

    Its small files are merged (`merge_small_files`), every table's that has more than one."""
    before = _state(conn)
    conn.execute(sql_text("warehouse/ducklake_compact.sql"))
    merge_small_files(conn, beyond=1)
    expirable = conn.execute(sql_text("warehouse/ducklake_expirable_snapshots.sql"), {"kept": snapshots_kept})
    if versions := [version for (version,) in expirable.fetchall()]:
        conn.execute(sql_text("warehouse/ducklake_expire_snapshots.sql"), {"versions": versions})
    conn.execute(sql_text("warehouse/ducklake_cleanup_old_files.sql"), {"kept": files_kept})
    conn.execute(sql_text("warehouse/ducklake_delete_orphaned_files.sql"), {"kept": files_kept})
    return before, _state(conn)


MERGED_BEYOND = 32
"""A table's data files, one a load, beyond which the load merges them (`merge_small_files`)."""


def merge_small_files(conn: duckdb.DuckDBPyConnection, beyond: int) -> None:
    """Merge the data files of each table that has more than `beyond` of them, but the
    conversation tables'. Each load adds a file to the tables it writes, and every statement
    that reads a table costs a look at each of its files (a DuckLake DELETE opens them all): on
    the 2M bench's lake, 108 files a rollup made an app-month's load 13.3 s instead of 11.5.
    A conversation table's files, one a load, each hold one app's days, by whose statistics a
    load or lookup of a few partitions skips the rest; merged, a file holds every app's days
    (there, `spans` and its peers merged made that load 49.8 s). A merge that meets a
    concurrent load's commit is left to the next."""
    from pipelines.transform.schemas import CONVERSATION_TABLES  # Arrow schemas: not on a reader's path

    kept_apart = {spec.name for spec in CONVERSATION_TABLES}
    for table, files in conn.execute(sql_text("warehouse/ducklake_file_counts.sql")).fetchall():
        if files > beyond and table not in kept_apart:
            try:
                conn.execute(sql_text("warehouse/ducklake_merge_files.sql"), {"table": table})
            except duckdb.TransactionException as exc:
                if not is_conflict(exc):
                    raise


def is_conflict(refusal: duckdb.TransactionException) -> bool:
    """Whether a commit was refused because another transaction changed the same data first."""
    return "conflict" in str(refusal).lower()


def _state(conn: duckdb.DuckDBPyConnection) -> LakeState:
    ((snapshots, data_files, delete_files),) = conn.execute(
        sql_text("warehouse/ducklake_state.sql")
    ).fetchall()
    return LakeState(int(snapshots), int(data_files), int(delete_files))


def _load_extensions(conn: duckdb.DuckDBPyConnection, names: Sequence[str]) -> None:
    """Load `names`: each from its `duckdb-extension-NAME` package when installed (no download),
    else DuckDB's own. The packaged files load unchecked (`PACKAGED_LOADS`); then signature checks
    are turned on for good, before any other file loads and before any statement of the lake."""
    packaged = {name: _packaged(name) for name in names}
    for name, file in packaged.items():
        if file is not None:
            _load(conn, name, str(file))
    conn.execute("SET allow_unsigned_extensions = false")  # DuckDB refuses to set it back
    conn.execute("RESET autoinstall_known_extensions")  # what DuckDB downloads from now on is checked
    for name, file in packaged.items():
        if file is None:
            _load(conn, name, name)


def _load(conn: duckdb.DuckDBPyConnection, name: str, source: str) -> None:
    try:
        conn.load_extension(source)
    except duckdb.Error as exc:
        raise DuckLakeSetupError(
            f"the DuckDB extension {name} is not installed: pip install -e '.[scale]' ({exc})"
        ) from exc


def _packaged(name: str) -> Traversable | None:
    """The extension file the `duckdb-extension-NAME` package holds for this DuckDB, if installed."""
    try:
        file = resources.files(f"duckdb_extension_{name}") / "extensions" / f"v{duckdb.__version__}"
    except ModuleNotFoundError:
        return None
    file = file / f"{name}.duckdb_extension"
    return file if file.is_file() else None


def shown(text: str) -> str:
    """`text` with any libpq password hidden: a secret is never shown, logged or stored."""
    return _PASSWORD.sub(r"\1***", text)
