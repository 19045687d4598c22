"""A command measured from outside, as `make bench` reports it: wall time, CPU time (user + system
of the process and its workers, from wait4's rusage, or the sum over the process tree sampled from
/proc when that is more: a daemon's grandchildren are not always waited for), peak RSS of the
largest process (its high-water mark, sampled every 20 ms), and of the whole process tree the
peak sum of RSS (every 20 ms) and of PSS (every 0.5 s), from /proc, and the bytes it wrote."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def settle_shared_libraries(prefix: str) -> int:
    """Drop the environment's shared libraries from the page cache, so that the commands measured
    map them as any later run does. A library just written by `pip install` stays cached in the
    large pages it was written in, and every process that maps it counts those in its RSS: a
    fresh environment measured 45 MB more per command (duckdb 65 MB on import, 47 once re-read).
    The number of files dropped."""
    dropped = 0
    for path in Path(prefix).rglob("*.so*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            dropped += 1
    return dropped


def process_tree(root: int) -> set[int]:
    """`root` and all its descendants, from /proc: through each thread's `children` file where
    the kernel has them (a few reads, not one per process on the machine: the sampler shares
    the two cores with what it measures), else from every process's parent."""
    try:
        return _descendants(root)
    except FileNotFoundError:
        if not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"):
            return _tree_by_parents(root)
        return {root}  # it has just exited


def _descendants(pid: int) -> set[int]:
    members = {pid}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                children = [int(child) for child in handle.read().split()]
        except FileNotFoundError:
            continue  # that thread ended
        for child in children:
            try:
                members |= _descendants(child)
            except FileNotFoundError:
                continue  # that child ended
    return members


def _tree_by_parents(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    members = {root}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in members and pid not in members:
                members.add(pid)
                changed = True
    return members


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm", "rb") as handle:
        return int(handle.read().split()[1]) * PAGE_SIZE


def _peak(pid: int) -> int:
    """One process's peak RSS since it started its program (VmHWM). Not wait4's ru_maxrss: Linux
    carries the high-water mark of the process that forked it into that, so a command run from a
    bench holding 600 MB reported 600 MB whatever it used itself."""
    with open(f"/proc/{pid}/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _cpu(pid: int) -> float:
    """User + system CPU seconds of one process so far (its own, not its children's)."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def _pss(pid: int) -> int:
    """Proportional set size: each shared page split between the processes mapping it, so the
    modules a worker shares with the process it was forked from count once for the tree."""
    with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
        for line in handle:
            if line.startswith(b"Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def _sum(pids: set[int], reader) -> int:
    total = 0
    for pid in pids:
        try:
            total += reader(pid)
        except (OSError, IndexError, ValueError):
            continue
    return total


def measure(
    command: list[str], *, env: dict[str, str] | None = None, json_result: bool = True
) -> dict[str, Any]:
    """Run `command`, sampling its process tree's memory and CPU; its last stdout line is its
    JSON result, or (`json_result=False`, a command of the product's own, bench.scale) its whole
    stdout is kept as `stdout`."""
    out = tempfile.TemporaryFile()  # noqa: SIM115 (read after the process ends)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=out, env={**os.environ, **(env or {})})
    peak_rss = peak_pss = peak_process = 0
    cpu_seen: dict[int, float] = {}  # each process's CPU when last seen
    samples = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        members = process_tree(process.pid)
        sizes = {member: _read(_rss, member) for member in members}
        peak_rss = max(peak_rss, sum(sizes.values()))
        peak_process = max(peak_process, *(_read(_peak, member) for member in members))
        for member in members:
            cpu_seen[member] = max(cpu_seen.get(member, 0.0), _read(_cpu, member))
        if samples % 25 == 0:  # PSS costs the kernel ~5 ms per large process: every 0.5 s
            peak_pss = max(peak_pss, _sum(members, _pss))
        samples += 1
        time.sleep(0.02)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    out.seek(0)
    text = out.read().decode()
    lines = text.strip().splitlines()
    if process.returncode != 0 or (json_result and not lines):
        raise RuntimeError(f"{' '.join(command[1:4])} failed with exit code {process.returncode}")
    result = json.loads(lines[-1]) if json_result else {"stdout": text}
    waited_cpu = usage.ru_utime + usage.ru_stime
    result.update(
        process_wall_seconds=wall,
        # Both are lower bounds: rusage misses descendants nobody waited for (a daemon's code
        # server and its runs), the samples each process's last 20 ms.
        cpu_seconds=max(waited_cpu, sum(cpu_seen.values())),
        waited_cpu_seconds=waited_cpu,
        sampled_tree_cpu_seconds=sum(cpu_seen.values()),
        processes=len(cpu_seen),
        peak_rss_mb=peak_process / 2**20,
        peak_tree_mb=peak_pss / 2**20,
        peak_tree_rss_mb=peak_rss / 2**20,
        # Bytes the process and its waited-for descendants wrote to storage (or dirtied in the
        # page cache for it): the kernel's block-output count, in 512-byte units.
        disk_written_mb=usage.ru_oublock * 512 / 2**20,
    )
    return result


def _read(reader, pid: int) -> Any:
    try:
        return reader(pid)
    except (OSError, IndexError, ValueError):
        return 0


WRITE_CALLS = "write,pwrite64,pwritev,pwritev2,sendfile,copy_file_range"
WRITE_STARTS = re.compile(r"^(\d+)\s+(\w+)\(\d+<([^>]*)>")
WRITE_ENDS = re.compile(r"\)\s+=\s+(-?\d+)(?:\s|$)")
"""A write in `strace -f -y` output: its process, call, the file it writes (the call's first
descriptor: the target of sendfile, the source of copy_file_range, in the same folder as its
target in this project) and, at the end of the line or of the line that resumes it, the bytes."""
CLONED = "cloned, not written"
"""Where `copy_file_range`'s bytes count on a filesystem that shares blocks (`clones_on_copy`)."""


def clones_on_copy(folder: Path) -> bool:
    """Does `copy_file_range` share blocks in `folder`'s filesystem (XFS, btrfs) rather than write
    them? Told by the free space a 16 MB copy takes."""
    source, target = folder / ".clone-probe", folder / ".clone-probe.copy"
    try:
        with source.open("wb") as handle:
            handle.write(os.urandom(16 * 2**20))
            os.fsync(handle.fileno())
        free = os.statvfs(folder)
        with source.open("rb") as reader, target.open("wb") as writer:
            os.copy_file_range(reader.fileno(), writer.fileno(), 16 * 2**20)
            os.fsync(writer.fileno())
        after = os.statvfs(folder)
        return (free.f_bavail - after.f_bavail) * after.f_frsize < 8 * 2**20
    except OSError:
        return False
    finally:
        for path in (source, target):
            path.unlink(missing_ok=True)


def written_by_place(
    command: list[str], env: dict[str, str], places: dict[str, Path], *, clones: bool = False
) -> dict[str, float] | None:
    """`command` run under strace: the MB it wrote under each of `places` (the first whose
    folder holds the file), and `other` (`clones`: as `writes_by_place`). None where strace is
    not installed."""
    if shutil.which("strace") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="ces-scale-") as folder:
        trace = Path(folder) / "writes"
        trace_command = ["strace", "-f", "-qq", "-y", "-e", f"trace={WRITE_CALLS}", "-o", str(trace)]
        subprocess.run(
            [*trace_command, *command], env={**os.environ, **env}, stdout=subprocess.DEVNULL, check=True
        )
        with trace.open(errors="replace") as lines:
            return writes_by_place(lines, places, clones=clones)


def writes_by_place(
    lines: Iterable[str], places: dict[str, Path], *, clones: bool = False
) -> dict[str, float]:
    """MB written under each of `places` (the first whose folder holds the file) and `other`, from
    the lines of `strace -f -y -e trace=WRITE_CALLS`; `clones`: `copy_file_range` shares blocks
    there, so its bytes count as `CLONED`, not under a place."""
    written = dict.fromkeys([*places, "other", *([CLONED] if clones else [])], 0)
    roots = {name: str(root.resolve()) for name, root in places.items()}  # as strace -y names files
    pending: dict[str, tuple[str, str]] = {}  # a call strace cut in two (another thread ran), by process
    for line in lines:
        started, ended = WRITE_STARTS.match(line), WRITE_ENDS.search(line)
        pid = line.split(None, 1)[0] if line.strip() else ""
        call = started.group(2, 3) if started else pending.pop(pid, None)
        if ended is None:
            if started:
                pending[pid] = started.group(2, 3)
            continue
        if call is not None:
            syscall, path = call
            place = next((name for name, root in roots.items() if path.startswith(root)), "other")
            if clones and syscall == "copy_file_range":
                place = CLONED
            written[place] += max(0, int(ended.group(1)))  # -1: the call failed
    return {place: count / 2**20 for place, count in written.items()}
