"""Fixtures shared across test modules."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines import stop
from scale.servers import ServerUnavailable, postgres_server

ROOT = Path(__file__).resolve().parent.parent


class _PandasAbsent:
    """DuckDB 1.5 tries `import pandas` at every parameter it binds, and Python does not remember
    an import that failed: each try searches every path entry again (two files of load tests:
    101,732 tries). Over the suite's thousands of small loads that is ~7% of its time (330 s
    against 348-357 s); this finder fails the search at once, as the full search would. Only
    where pandas is not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("No module named 'pandas'", name="pandas")


if importlib.util.find_spec("pandas") is None:
    sys.meta_path.insert(0, _PandasAbsent())


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """One PostgreSQL server for the session; each test makes the databases it needs."""
    try:
        server = postgres_server()
        conninfo = server.__enter__()
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield conninfo
    finally:
        server.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def no_stop_asked() -> None:
    """No stop left asked by an earlier test that sent its process Ctrl-C, as a user does (a
    command clears it as it starts; a test running jobs without the command would inherit it)."""
    stop.requested.clear()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A user's work folder: the project's instance settings, none of its local runs."""
    (tmp_path / "dagster_home").mkdir()
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", tmp_path / "dagster_home")
    return tmp_path
