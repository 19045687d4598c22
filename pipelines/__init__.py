"""ces-pipeline: CES conversations and evaluation runs into a Parquet lake and a DuckDB warehouse.

Two defaults for the native libraries underneath, set before any of them loads (a value
already in the environment wins):
- `ARROW_DEFAULT_MEMORY_POOL=system`: Arrow's C++ code (Parquet writers, compute kernels)
  allocates from the C library instead of pyarrow's bundled mimalloc, which keeps ~25 MB of
  freed pages per process resident: a flatten worker peaks ~26 MB lower, at the same speed.
  `pyarrow.set_memory_pool` cannot do this: it reaches allocations made from Python only.
- `OPENBLAS_NUM_THREADS=1`: numpy's OpenBLAS otherwise starts a thread per core at import,
  which spins ~0.15 s of CPU; the pipeline does no linear algebra.
"""

import os

os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
