"""The scale bench attributes a load's disk writes to the warehouse, the lake and Dagster from an
strace of the command, so that the warehouse's own cost per load is told apart from the rest."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.measure import CLONED, measure, settle_shared_libraries, writes_by_place

PLACES = {"warehouse": Path("/run/warehouse"), "dagster": Path("/run/dagster_home")}
TRACE = """\
101 write(5</run/warehouse.duckdb.loading>, "..."..., 1048576) = 1048576
101 sendfile(6</run/warehouse.duckdb.loading>, 5</run/warehouse.duckdb>, NULL, 2097152) = 2097152
102 pwrite64(7</run/dagster_home/history/runs/index.db-wal>, "..."..., 4096, 0 <unfinished ...>
101 write(8</run/warehouse.duckdb.parts/spans/a/day/p.parquet>, "PAR1"..., 524288) = 524288
102 <... pwrite64 resumed>)                 = 4096
103 write(2<pipe:[3071]>, "rebuilt"..., 7) = 7
103 write(9</run/lake/tables/t.parquet>, "..."..., 100) = -1 ENOSPC (No space left on device)
"""


def test_each_write_counts_for_the_folder_of_the_file_it_writes() -> None:
    found = writes_by_place(TRACE.splitlines(), PLACES)
    assert found["warehouse"] == pytest.approx((1048576 + 2097152 + 524288) / 2**20)  # sendfile: its target
    assert found["dagster"] == pytest.approx(4096 / 2**20)  # resumed on a later line
    assert found["other"] == pytest.approx(7 / 2**20)  # a failed write wrote nothing


def test_a_place_reached_through_a_link_counts_what_strace_names_by_its_real_path(tmp_path: Path) -> None:
    """strace names a file by its resolved path: a run folder under a linked data folder still
    counts its warehouse's writes as the warehouse's."""
    (tmp_path / "data").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "data")
    trace = [f'101 write(5<{tmp_path}/data/run/warehouse.duckdb.loading>, "..."..., 4096) = 4096']
    found = writes_by_place(trace, {"warehouse": tmp_path / "linked" / "run" / "warehouse"})
    assert found == {"warehouse": pytest.approx(4096 / 2**20), "other": 0.0}


def test_a_copy_file_range_counts_as_written_unless_the_filesystem_shares_blocks() -> None:
    """On XFS or btrfs the kernel clones the working copy of the warehouse file: no block written."""
    trace = [
        "101 copy_file_range(5</run/warehouse.duckdb>, NULL, 6</run/warehouse.duckdb.loading>, NULL, "
        "8388608, 0) = 8388608",
        '101 write(6</run/warehouse.duckdb.loading>, "..."..., 65536) = 65536',
    ]
    assert writes_by_place(trace, PLACES)["warehouse"] == pytest.approx((8388608 + 65536) / 2**20)
    cloned = writes_by_place(trace, PLACES, clones=True)
    assert cloned["warehouse"] == pytest.approx(65536 / 2**20) and cloned[CLONED] == pytest.approx(8)


def test_a_failed_write_leaves_no_call_open_for_its_process() -> None:
    trace = [
        '103 write(9</run/warehouse.duckdb>, "..."..., 100) = -1 ENOSPC (No space left on device)',
        "103 <... pwrite64 resumed>) = 4096",  # no call of 103 is open: not the failed write's
    ]
    assert writes_by_place(trace, PLACES) == {"warehouse": 0.0, "dagster": 0.0, "other": 0.0}


def test_settling_shared_libraries_drops_every_library_file_below_the_prefix(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    for name in ("pkg/_ext.cpython-311-x86_64-linux-gnu.so", "libz.so.1", "module.py"):
        (tmp_path / name).write_bytes(b"\0" * 4096)
    (tmp_path / "pkg" / "folder.so").mkdir()  # a folder named like a library is not a file
    assert settle_shared_libraries(str(tmp_path)) == 2


def test_a_commands_peak_memory_is_its_own_not_the_bench_processs(tmp_path: Path) -> None:
    """The bench holds 300 MB when it starts a command that holds 60 MB: the command's peak is
    60 MB and some, not the bench's 300 (which Linux carries into the child's ru_maxrss)."""
    held = bytearray(300 * 2**20)
    for offset in range(0, len(held), 4096):  # touched: resident
        held[offset] = 1
    program = "import time; b = bytearray(60 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.3)"
    found = measure([sys.executable, "-c", program], json_result=False)
    assert 60 < found["peak_rss_mb"] < 150, found["peak_rss_mb"]
    assert len(held) == 300 * 2**20
