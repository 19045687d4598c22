"""Who may open the warehouse file when: loads queue for each other; readers (BI tools, the
DuckDB CLI, the project's own queries) open it at any time, never wait, never block a load and
never see part of one; DuckDB 1.x clients can read it."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import shutil
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import duckdb
import pytest
import trend_samples as samples
from test_cli import base_env, cli

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.warehouse import publish
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.lock import WarehouseBusyError, warehouse_lock
from pipelines.warehouse.parts import BOOKKEEPING, PARTS_SCHEMA
from pipelines.warehouse.publish import BLOCK_SIZE, WORKING_SUFFIX, WarehouseFileError, copy_file


def _hold_write_lock(path: str, ready, release) -> None:
    """Hold the write lock from when `ready` is set until `release` is (at most a minute)."""
    with warehouse_lock(path, timeout_seconds=5):
        ready.set()
        release.wait(60)


def _append_next(path: str) -> None:
    """Read-modify-write: without mutual exclusion two writers would insert the same number."""
    with Warehouse(path).connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (v INTEGER)")
        current = conn.execute("SELECT count(*) FROM t").fetchone()[0]
        time.sleep(0.05)  # widen the window a racing writer would need
        conn.execute("INSERT INTO t VALUES (?)", [current])


def test_a_held_write_lock_times_out_with_a_clear_error_and_readers_do_not_wait(tmp_path: Path) -> None:
    path = str(tmp_path / "w.duckdb")
    with Warehouse(path).connect() as conn:
        conn.execute("CREATE TABLE t AS SELECT 7 AS v")
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=_hold_write_lock, args=(path, ready, release))
    holder.start()
    try:
        assert ready.wait(120)  # a spawned process imports this module (and Dagster) first
        started = time.monotonic()
        with (
            pytest.raises(WarehouseBusyError, match="another ingest held it"),
            Warehouse(path, lock_timeout_seconds=0.3).connect(),
        ):
            pass
        assert 0.25 < time.monotonic() - started < 1.5
        started = time.monotonic()
        with Warehouse(path).connect(read_only=True) as conn:
            assert conn.execute("SELECT v FROM t").fetchall() == [(7,)]
        assert time.monotonic() - started < 0.5
    finally:
        release.set()
        holder.join()


HOLD_OPEN_FOR_WRITING = """
import sys, time, duckdb
conn = duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
"""


@contextmanager
def held_open_for_writing(path: Path) -> Iterator[None]:
    """`path` opened read-write by another process (as a program other than a BI tool would) for
    the block; closed after it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_OPEN_FOR_WRITING, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        yield
    finally:
        holder.communicate("", timeout=60)


def test_a_file_open_for_writing_elsewhere_fails_loads_and_reads_saying_so(tmp_path: Path) -> None:
    """DuckDB's lock of a program that opened the file read-write (not read-only, as BI tools do)
    refuses every other process: a load fails before it copies anything, with what to do."""
    path = tmp_path / "w.duckdb"
    with Warehouse(str(path)).connect() as conn:
        conn.execute("CREATE TABLE t AS SELECT 7 AS v")
    published = path.read_bytes()
    with held_open_for_writing(path):
        for read_only in (False, True):
            with (
                pytest.raises(WarehouseBusyError, match="Is it open for writing in another program"),
                Warehouse(str(path)).connect(read_only=read_only),
            ):
                pass
    assert path.read_bytes() == published and not Path(f"{path}{WORKING_SUFFIX}").exists()
    with Warehouse(str(path)).connect() as conn:  # closed: the next load goes ahead
        conn.execute("INSERT INTO t VALUES (8)")
    with Warehouse(str(path)).connect(read_only=True) as conn:
        assert conn.execute("SELECT v FROM t ORDER BY v").fetchall() == [(7,), (8,)]
    folder = tmp_path / "a-folder.duckdb"  # a path that is no file: said as it is, no lock hinted
    folder.mkdir()
    for read_only in (False, True):
        with (
            pytest.raises(WarehouseFileError, match="Is a directory") as refused,
            Warehouse(str(folder)).connect(read_only=read_only),
        ):
            pass
        assert "another program" not in str(refused.value)


def test_a_damaged_file_is_said_to_be_made_again_from_the_lake(tmp_path: Path) -> None:
    """A copy cut short, an empty file, blocks overwritten: what to do, not DuckDB's words alone."""
    path = tmp_path / "w.duckdb"
    with Warehouse(str(path)).connect() as conn:
        conn.execute("CREATE TABLE t AS SELECT range AS v FROM range(100000)")
    whole = path.read_bytes()
    headers = 3 * 4096  # DuckDB's file header and its two database headers, then the blocks
    overwritten = whole[:headers] + b"\xff" * (len(whole) - headers)
    cases = (("cut-short", whole[: len(whole) // 2]), ("empty", b""), ("overwritten", overwritten))
    for name, damaged in cases:
        copy = tmp_path / f"{name}.duckdb"
        copy.write_bytes(damaged)
        for read_only in (True, False):
            with (
                pytest.raises(WarehouseFileError, match="The file is damaged: move it aside") as refused,
                Warehouse(str(copy)).connect(read_only=read_only),
            ):
                pass
            assert str(refused.value).endswith("`ces-pipeline rebuild`."), name


def test_concurrent_writers_wait_for_each_other(tmp_path: Path) -> None:
    path = str(tmp_path / "w.duckdb")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_next, args=(path,)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    with Warehouse(path).connect(read_only=True) as conn:
        assert sorted(v for (v,) in conn.execute("SELECT v FROM t").fetchall()) == [0, 1, 2, 3]


def test_a_failed_load_publishes_nothing_and_leaves_no_working_copy(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with Warehouse(str(path)).connect() as conn:
        conn.execute("CREATE TABLE t AS SELECT 1 AS v")
    published = path.read_bytes()
    with pytest.raises(ZeroDivisionError), Warehouse(str(path)).connect() as conn:
        conn.execute("INSERT INTO t VALUES (2)")
        raise ZeroDivisionError
    assert path.read_bytes() == published
    assert not Path(f"{path}{WORKING_SUFFIX}").exists()
    assert not Path(f"{path}.wal").exists()


def test_a_file_left_with_a_write_ahead_log_keeps_its_committed_rows_through_the_next_load(
    tmp_path: Path,
) -> None:
    """A load killed by an older release, which wrote the file in place, left its write-ahead log
    beside it: the next load folds the log in before it copies the file, so no committed row is
    lost and no log is left beside the file it publishes. Held open elsewhere, the log cannot be
    folded in: the load fails saying so."""
    path = tmp_path / "w.duckdb"
    with Warehouse(str(path)).connect() as conn:
        conn.execute("CREATE TABLE t AS SELECT 1 AS v")

    def logged(value: int) -> None:
        """A row committed in place, in the log alone."""
        in_place = duckdb.connect(str(path))
        in_place.execute("PRAGMA disable_checkpoint_on_shutdown")
        in_place.execute("INSERT INTO t VALUES (?)", [value])
        in_place.close()
        assert Path(f"{path}.wal").exists()

    logged(2)
    with Warehouse(str(path)).connect() as conn:
        conn.execute("INSERT INTO t VALUES (3)")
    assert not Path(f"{path}.wal").exists()
    with Warehouse(str(path)).connect(read_only=True) as conn:
        assert conn.execute("SELECT v FROM t ORDER BY v").fetchall() == [(1,), (2,), (3,)]

    logged(4)
    with (
        held_open_for_writing(path),
        pytest.raises(WarehouseFileError, match=r"unapplied write-ahead log .* close it once"),
        Warehouse(str(path)).connect(),
    ):
        pass


@pytest.mark.parametrize("refusal", [None, errno.EXDEV, errno.EOPNOTSUPP, errno.ENOSPC])
@pytest.mark.parametrize("size", [0, 3 * 2**20 + 17])
def test_the_working_copy_is_the_published_file_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: int | None, size: int
) -> None:
    """By `copy_file_range` (blocks shared on XFS and btrfs); where a filesystem refuses it, by
    a plain copy; a copy that fails for want of space fails."""
    source, copy = tmp_path / "w.duckdb", tmp_path / f"w.duckdb{WORKING_SUFFIX}"
    source.write_bytes(os.urandom(size))
    if refusal is not None:

        def refuse(*args: int) -> int:
            raise OSError(refusal, os.strerror(refusal))

        monkeypatch.setattr(os, "copy_file_range", refuse)
    if refusal == errno.ENOSPC and size:
        with pytest.raises(OSError, match="No space left"):
            copy_file(str(source), str(copy))
        return
    copy_file(str(source), str(copy))
    assert copy.read_bytes() == source.read_bytes()


def test_the_file_is_in_the_storage_format_every_duckdb_1x_reads(tmp_path: Path) -> None:
    """Storage version 64, the one DuckDB 1.0 to 1.5 write by default (a newer client refuses
    nothing older); the number sits after the 8-byte checksum and the magic bytes of the file's
    main header. Which clients open the file is the next test's."""
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
    header = Path(warehouse.path).read_bytes()[:20]
    assert header[8:12] == b"DUCK"
    assert struct.unpack("<Q", header[12:20]) == (64,)


def _everything(path: str) -> dict[str, object]:
    """Every table's and view's rows (sorted), the macros, and every comment of a warehouse file."""
    with duckdb.connect(path, read_only=True) as conn:
        names = conn.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
            "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
        ).fetchall()
        found: dict[str, object] = {
            name: sorted(map(repr, conn.execute(f'SELECT * FROM "{name}"').fetchall())) for (name,) in names
        }
        found["macros"] = conn.execute(
            "SELECT schema_name, function_name, macro_definition FROM duckdb_functions() "
            "WHERE NOT internal AND function_type IN ('macro', 'table_macro') ORDER BY ALL"
        ).fetchall()
        found["comments"] = conn.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE comment IS NOT NULL "
            "UNION ALL SELECT view_name, NULL, comment FROM duckdb_views() WHERE comment IS NOT NULL "
            "ORDER BY ALL"
        ).fetchall()
    return found


def _block_size(path: str) -> int:
    with duckdb.connect(path, read_only=True) as conn:
        return conn.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]


def held(everything: dict[str, object]) -> dict[str, object]:
    """What the warehouse holds (`_everything`), apart from which parts hold it (a load writes
    new ones)."""
    kept = {name: rows for name, rows in everything.items() if name not in BOOKKEEPING}
    kept["macros"] = [macro for macro in everything["macros"] if macro[0] != PARTS_SCHEMA]
    return kept


def _used_bytes(path: str) -> int:
    with duckdb.connect(path, read_only=True) as conn:
        return conn.execute("SELECT used_blocks * block_size FROM pragma_database_size()").fetchone()[0]


def test_a_file_mostly_free_is_written_anew_by_the_next_load(tmp_path: Path) -> None:
    """A table dropped from the file (as the rollups were, moved into parts) leaves its blocks
    free, which DuckDB never gives back but at the file's end: the next load writes the file
    anew instead of copying them."""
    from pipelines.ingest.load import load_conversation_partitions

    lake, warehouse = samples.build_warehouse(tmp_path)
    (app, day), *_ = sorted(samples.conversations())
    load_conversation_partitions(lake, warehouse, [(app, day)])
    expected = _everything(warehouse.path)
    with warehouse.connect() as conn:  # a release that kept a large table, and rows after it
        conn.execute("CREATE TABLE moved_out AS SELECT range AS i, random() AS x FROM range(3000000)")
    with warehouse.connect() as conn:
        conn.execute("CREATE TABLE kept AS SELECT range AS i, random() AS x FROM range(1000000)")
    with warehouse.connect() as conn:  # the next release moves the large one out
        conn.execute("DROP TABLE moved_out")
    before = os.path.getsize(warehouse.path)
    assert before > publish.MOSTLY_FREE * _used_bytes(warehouse.path)

    load_conversation_partitions(lake, warehouse, [(app, day)])

    assert os.path.getsize(warehouse.path) <= 2 * _used_bytes(warehouse.path)
    assert os.path.getsize(warehouse.path) < before / 2
    found = _everything(warehouse.path)
    assert {name: rows for name, rows in held(found).items() if name != "kept"} == held(expected)
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        kept = conn.execute("SELECT count(*), sum(i) FROM kept").fetchone()
    assert kept == (1_000_000, 999_999 * 1_000_000 // 2)


def test_a_file_in_duckdbs_default_blocks_is_written_again_in_the_warehouses_whole(tmp_path: Path) -> None:
    """A load writes the warehouse in BLOCK_SIZE blocks; a file in DuckDB's 256 KB ones (an older
    release's) is written again in them by its next load, every row, macro and comment kept."""
    from pipelines.ingest.load import load_conversation_partitions

    lake, warehouse = samples.build_warehouse(tmp_path)
    assert _block_size(warehouse.path) == BLOCK_SIZE
    (app, day), *_ = sorted(samples.conversations())
    load_conversation_partitions(lake, warehouse, [(app, day)])  # a load that changes no row
    expected = _everything(warehouse.path)
    older = tmp_path / "older.duckdb"
    with duckdb.connect() as conn:
        conn.execute(f"ATTACH '{warehouse.path}' AS published (READ_ONLY)")
        conn.execute(f"ATTACH '{older}' AS older (BLOCK_SIZE 262144)")
        conn.execute("COPY FROM DATABASE published TO older")
    os.replace(older, warehouse.path)
    assert _block_size(warehouse.path) == 262_144

    load_conversation_partitions(lake, warehouse, [(app, day)])

    assert _block_size(warehouse.path) == BLOCK_SIZE
    found = _everything(warehouse.path)
    assert found.keys() == expected.keys() and len(found) > 50

    assert held(found) == held(expected)
    assert found["comments"] and held(found)["macros"]
    assert len(found["warehouse_parts"]) == len(expected["warehouse_parts"])


OLDEST_DUCKDB = "1.5.0"
"""The oldest DuckDB that opens every file this one writes: DuckDB 1.5 writes files that 1.0-1.4
may refuse once loads have rewritten them ("Failed to load metadata pointer"), depending on how
the file's metadata falls into blocks (docs/warehouse.md)."""

EVERY_RELATION = """
import json, sys
import duckdb
conn = duckdb.connect(sys.argv[1], read_only=True)
names = [name for (name,) in conn.execute(
    "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
    "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
).fetchall()]
answers = {}
for name in names:
    try:
        answers[name] = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
    except duckdb.Error as exc:
        answers[name] = str(exc).splitlines()[0]
print(json.dumps([duckdb.__version__, answers]))
"""


@pytest.fixture(scope="session")
def oldest_duckdb() -> Path:
    """A folder holding `OLDEST_DUCKDB`, a BI tool's client that is not upgraded, to put first on
    this interpreter's path: installed once, beside the environment running the tests, from the
    same package index."""
    target = Path(sys.prefix) / f"site-duckdb-{OLDEST_DUCKDB}"
    if not target.exists():
        building = target.with_name(f"{target.name}.{uuid.uuid4().hex[:8]}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--target",
                str(building),
                f"duckdb=={OLDEST_DUCKDB}",
            ],
            check=True,
            timeout=300,
        )
        try:
            building.rename(target)
        except OSError:  # made meanwhile by another worker
            shutil.rmtree(building)
    return target


def test_the_oldest_duckdb_reads_every_table_and_view_as_this_version_does(
    tmp_path: Path, oldest_duckdb: Path
) -> None:
    """A BI tool on the oldest DuckDB that reads this file format opens the file and gets every
    table and view, conversation tables (views over their parts' macros, day parts, folded ones
    and folded ones with a day hidden) and evaluations, with the same rows as this DuckDB."""
    from conversation_samples import full_conversation
    from test_warehouse import write_partition

    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.warehouse.parts import is_folded

    lake, warehouse = samples.build_warehouse(tmp_path)
    later = date(2026, 11, 25)  # the sample's days of this app are then folded
    write_partition(lake, samples.SUPPORT, later, [full_conversation("later", start="2026-11-25T10:00:00Z")])
    load_conversation_partitions(lake, warehouse, [(samples.SUPPORT, later)])
    load_conversation_partitions(lake, warehouse, [(samples.SUPPORT, samples.DAYS[0])])  # a folded day again
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        assert any(is_folded(file) for (file,) in conn.execute("SELECT file FROM warehouse_parts").fetchall())
        assert conn.execute("SELECT count(*) FROM warehouse_hidden_days").fetchone()[0] > 0  # read around
    answers = {}
    for path in (str(oldest_duckdb), ""):
        done = subprocess.run(
            [sys.executable, "-c", EVERY_RELATION, warehouse.path],
            env=os.environ | {"PYTHONPATH": path},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        version, answers[path] = json.loads(done.stdout)
        assert version == (OLDEST_DUCKDB if path else duckdb.__version__)
    old, new = answers[str(oldest_duckdb)], answers[""]
    assert old == new
    assert all(isinstance(rows, int) for rows in new.values()), new
    assert len(new) > 50 and new["spans"] > 0 and new["evaluation_failures"] > 0


HOLDER = """
import json, os, sys, time
import duckdb
path, stop = sys.argv[1], sys.argv[2]
held = duckdb.connect(path, read_only=True)  # a pooled BI connection, open for the whole load
before = held.execute("SELECT count(*) FROM conversations").fetchone()[0]
print("holding", flush=True)
while not os.path.exists(stop):
    time.sleep(0.02)
print(json.dumps([before, held.execute("SELECT count(*) FROM conversations").fetchone()[0]]), flush=True)
"""

OPENER = """
import json, os, sys, time
import duckdb
path, stop = sys.argv[1], sys.argv[2]
seen, refused = [], []
print("opening", flush=True)
while not os.path.exists(stop):
    try:
        with duckdb.connect(path, read_only=True) as conn:
            seen.append(conn.execute(
                "SELECT c.day, c.n, coalesce(s.n, 0) FROM "
                "(SELECT partition_date::VARCHAR AS day, count(*) AS n FROM conversations GROUP BY 1) AS c "
                "LEFT JOIN (SELECT partition_date::VARCHAR AS day, count(*) AS n FROM spans GROUP BY 1) AS s "
                "USING (day) ORDER BY 1"
            ).fetchall())
    except duckdb.Error as exc:
        refused.append(str(exc))
    time.sleep(0.02)
print(json.dumps({"seen": seen, "refused": refused}), flush=True)
"""


def test_bi_readers_never_block_a_load_and_see_whole_loads_only(workdir: Path) -> None:
    """What a dashboard does during a scheduled load: one pooled connection held open, new ones
    opened every 20 ms. The ingest of 4 runs neither fails nor waits; every open succeeds and
    sees the partitions of whole runs, each with all its rows."""
    scale = SimulatorScale(
        seed=5, apps=1, start_date=date(2026, 10, 25), days=9, conversations_per_day=5, max_turns=2
    )
    with running_simulator(SimulatorConfig(scale=scale)) as sim:
        env = base_env(workdir) | {"CES_MCP_URL": sim.url, "CES_APPS": sim.apps[0], "CES_DAYS_PER_RUN": "2"}
        first_day = ["--since", "2026-10-25", "--until", "2026-10-26", "--skip-evaluations"]
        first = cli("ingest", *first_day, env=env, cwd=workdir)
        assert first.returncode == 0, first.stderr
        warehouse = workdir / "warehouse.duckdb"
        stop = workdir / "stop"
        readers = [
            subprocess.Popen(
                [sys.executable, "-c", script, str(warehouse), str(stop)], stdout=subprocess.PIPE, text=True
            )
            for script in (HOLDER, OPENER)
        ]
        try:
            for reader in readers:
                assert reader.stdout is not None and reader.stdout.readline().strip() in {
                    "holding",
                    "opening",
                }
            window = ["--since", "2026-10-26", "--until", "2026-11-03", "--skip-evaluations"]
            loaded = cli("ingest", *window, env=env, cwd=workdir)
        finally:
            stop.touch()
            held, report = (json.loads(r.communicate(timeout=60)[0].splitlines()[-1]) for r in readers)
        assert loaded.returncode == 0, loaded.stderr
        assert "ingested 8 partitions in 4 runs" in loaded.stderr
        assert "WarehouseBusyError" not in loaded.stderr and "Conflicting lock" not in loaded.stderr
    assert report["refused"] == []
    assert held == [5, 5]  # a connection keeps the state its database was opened with
    final = Warehouse(str(warehouse))
    with final.connect(read_only=True) as conn:
        whole = dict(
            conn.execute("SELECT partition_date::VARCHAR, count(*) FROM spans GROUP BY 1").fetchall()
        )
    days = sorted(whole)
    assert len(days) == 9 and len(report["seen"]) > 10
    # Each state a reader saw is the first load plus the first k runs of two days, each day whole.
    states = [tuple(days[: 1 + 2 * runs]) for runs in range(5)]
    for snapshot in report["seen"]:
        assert tuple(day for day, _, _ in snapshot) in states, snapshot
        assert all(conversations == 5 and spans == whole[day] for day, conversations, spans in snapshot)
    assert {tuple(day for day, _, _ in snapshot) for snapshot in report["seen"]} >= {states[0], states[-1]}
