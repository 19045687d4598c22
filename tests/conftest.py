"""Fixtures shared across test modules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scale.servers import ServerUnavailable, postgres_server


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
