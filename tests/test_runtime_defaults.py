"""The package's defaults for the native libraries: set before they load, and only where the
environment says nothing (see `pipelines/__init__.py`)."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = (
    "import pipelines, os, pyarrow as pa; "
    "print(pa.default_memory_pool().backend_name, os.environ['OPENBLAS_NUM_THREADS'])"
)


def _probe(**env: str) -> str:
    base = {
        k: v for k, v in os.environ.items() if k not in ("ARROW_DEFAULT_MEMORY_POOL", "OPENBLAS_NUM_THREADS")
    }
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=base | env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_arrow_allocates_from_the_c_library_and_blas_runs_one_thread() -> None:
    assert _probe() == "system 1"


def test_a_value_in_the_environment_wins() -> None:
    assert _probe(ARROW_DEFAULT_MEMORY_POOL="mimalloc", OPENBLAS_NUM_THREADS="2") == "mimalloc 2"
