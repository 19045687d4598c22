"""CPU per phase: where an approach's CPU goes, from a run with a sampler in its process.

While the block of `sampled(path)` runs, a thread wakes every `INTERVAL` seconds, reads each
Python thread's own CPU clock and charges the CPU that thread used since the last wake to the
phase of the code it is in: the innermost frame of its stack that a rule of `PHASE_RULES`
names (a C call such as DuckDB's `execute` or msgspec's `decode` counts for the Python function
that made it: `duck.py` is load, `checks.py` is checks). The process's CPU that no Python thread
used, DuckDB's worker threads running the query the main thread waits on, is charged to the
main thread's phase. Each thread's CPU is measured, only its attribution is sampled; the
sampler's own CPU is left out.

cProfile was the first choice, but its per-call hook made this call-heavy code 4-6x slower,
which inflates the phases that make many small calls (Dagster, the flattener) against those
that make few long ones (DuckDB, Parquet): the shares would mislead.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FrameType

INTERVAL = 0.005

PHASES = {
    "decode": "raw lake and JSON: gunzip and decode (msgspec, protojson); for ingest also the "
    "fetched records' encoding and gzip",
    "flatten": "flatten into Arrow (pipelines/transform, pipelines/ingest/flatten.py)",
    "parquet": "Parquet writing (pyarrow.parquet)",
    "load": "warehouse load (DuckDB, called from pipelines/warehouse)",
    "checks": "checks (the asset checks' SQL, the lake's rows-in-partition check)",
    "dagster": "Dagster (dagster/* with its SQLite event log, the project's asset glue)",
    "fetch": "fetch over HTTP (pipelines/ces client, pipelines/ingest/fetch.py, httpx)",
    "imports": "module imports (importlib)",
    "other": "other (CLI, settings, the rest)",
}

INHERIT = None
"""A rule's phase for code that serves several phases: its caller's phase counts."""
PHASE_RULES: tuple[tuple[str, str | None], ...] = (
    ("pipelines/ingest/flatten.py:lake_conversation_records", "decode"),
    ("pipelines/lake/store.py:Lake.read_raw_lines", "decode"),
    ("pipelines/lake/store.py:TableWriter", "parquet"),
    ("pipelines/lake/store.py", INHERIT),
    ("pipelines/warehouse/checks.py", "checks"),
    ("pipelines/orchestration/checks.py", "checks"),
    ("pipelines/lake/checks.py", "checks"),
    ("pipelines/warehouse/", "load"),
    ("pipelines/ingest/load.py", "load"),
    ("pipelines/transform/conversation_json.py", "decode"),
    ("pipelines/protojson/", "decode"),
    ("pipelines/ces/records.py", "decode"),
    ("/msgspec/", "decode"),
    ("/isal/", "decode"),
    ("pipelines/transform/", "flatten"),
    ("pipelines/ingest/flatten.py", "flatten"),
    ("pyarrow/parquet", "parquet"),
    ("pipelines/ces/tools.py", INHERIT),  # the listing's judgment serves the fetch and the flatten
    ("pipelines/ces/paging.py", INHERIT),
    ("pipelines/ces/window.py", INHERIT),
    ("pipelines/ces/", "fetch"),
    ("pipelines/ingest/fetch.py", "fetch"),
    ("/httpx/", "fetch"),
    ("/httpcore/", "fetch"),
    ("/h11/", "fetch"),
    ("pipelines/orchestration/", "dagster"),
    ("pipelines/definitions.py", "dagster"),
    ("/dagster", "dagster"),
    ("<frozen importlib", "imports"),
    ("pipelines/", "other"),
)


def _rule(code: CodeType) -> str | None:
    where = f"{code.co_filename}:{code.co_qualname}"
    for fragment, phase in PHASE_RULES:
        if fragment in where:
            return phase
    return INHERIT


class _Attribution:
    """The phase of a stack, from the rule of each code object (looked up once)."""

    def __init__(self) -> None:
        self._rules: dict[CodeType, str | None] = {}

    def phase(self, frame: FrameType | None) -> str:
        while frame is not None:
            code = frame.f_code
            if code not in self._rules:
                self._rules[code] = _rule(code)
            if self._rules[code] is not INHERIT:
                return self._rules[code]  # type: ignore[return-value]
            frame = frame.f_back
        return "other"


_PREFIXES = (
    re.compile(r"^.*/site-packages/"),
    re.compile(r"^.*/lib/python3\.\d+/"),
    re.compile(f"^{re.escape(str(Path(__file__).resolve().parents[1]))}/"),
)


def _label(code: CodeType) -> str:
    """`path:function`, the path from site-packages, the standard library or the project's root."""
    path = code.co_filename
    for prefix in _PREFIXES:
        if prefix.match(path):
            path = prefix.sub("", path, count=1)
            break
    return f"{path}:{code.co_qualname}"


@contextmanager
def sampled(path: str, interval: float = INTERVAL) -> Iterator[None]:
    """Sample the block's CPU by phase (see the module's docstring) into `path`, as JSON."""
    main, stop = threading.get_ident(), threading.Event()
    phases: Counter[str] = Counter()
    functions: Counter[CodeType] = Counter()
    totals = {"native_seconds": 0.0, "sampler_seconds": 0.0, "samples": 0}
    attribution = _Attribution()
    # Threads already running count from now; a thread started later, from its start.
    last = {ident: _thread_cpu(ident) or 0.0 for ident in sys._current_frames()}

    def sample() -> None:
        me, process = threading.get_ident(), time.process_time()
        while True:
            stopping = stop.wait(interval)
            now, used, main_phase = time.process_time(), 0.0, "other"
            for ident, frame in sys._current_frames().items():
                cpu = _thread_cpu(ident)
                if cpu is None:
                    continue
                delta, last[ident] = cpu - last.get(ident, 0.0), cpu
                if delta < 0:  # a new thread with an ended thread's id
                    delta = cpu
                used += delta
                if ident == me:
                    totals["sampler_seconds"] += delta
                    continue
                phase = attribution.phase(frame)
                phases[phase] += delta
                functions[frame.f_code] += delta
                if ident == main:
                    main_phase = phase
            native = max(0.0, now - process - used)
            phases[main_phase] += native
            totals["native_seconds"] += native
            totals["samples"] += 1
            process = now
            if stopping:
                return

    sampler = threading.Thread(target=sample, name="bench-sampler", daemon=True)
    sampler.start()
    try:
        yield
    finally:
        stop.set()
        sampler.join()
        top = {_label(code): round(seconds, 4) for code, seconds in functions.most_common(40)}
        document = {"interval": interval, **totals, "phases": dict(phases), "functions": top}
        with open(path, "w") as handle:
            json.dump(document, handle, indent=1)


def _thread_cpu(ident: int) -> float | None:
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(ident))
    except (OSError, ValueError):  # the thread has just ended
        return None
