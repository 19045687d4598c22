"""Every knob of the simulated server in one immutable object."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from starlette.types import ASGIApp

from pipelines.ces.simulator.corpus.scale import SimulatorScale

ResponseMode = Literal["json", "sse", "mixed"]
FaultInjector = Callable[[ASGIApp], ASGIApp]
"""Wraps the whole MCP ASGI app (outermost, before auth): the seam for injecting transport faults."""


@dataclass(frozen=True)
class SimulatorConfig:
    """How the simulated CES MCP server behaves; the data it serves is `scale`."""

    scale: SimulatorScale = field(default_factory=SimulatorScale)
    page_size_default: int = 20
    """Page size when a list request gives none (or 0)."""
    page_size_max: int = 50
    """Larger requested page sizes are capped to this, as Google's list methods do."""
    summary_fraction: float = 0.15
    """Share of listed conversations sent without `turns` (`turnCount` kept): clients must hydrate them."""
    short_page_fraction: float = 0.1
    """Share of conversation pages deliberately shorter than asked, some empty, still with a next token."""
    response_mode: ResponseMode = "mixed"
    """"json": application/json bodies; "sse": text/event-stream; "mixed": alternate per request."""
    structured_content: bool = True
    """When False, tool results carry only the JSON text content (and tools declare no outputSchema)."""
    require_session: bool = False
    """Behave like an older session-based server: initialize first, then send `Mcp-Session-Id`."""
    required_token: str | None = field(default=None, repr=False)
    """When set, every request needs `Authorization: Bearer <token>`. Never logged."""
    faults: FaultInjector | None = None
    """`SimulatedFaults` (server/faults.py, `--faults SPEC`): wraps the app for transport faults,
    and the tools consult it for data faults (expiring page tokens, duplicates, repeated pages)."""
    run_step_seconds: float = 3.0
    """A run started by `run_evaluation` moves a step (of 4) per this many seconds of the server's
    clock, whoever polls what (a client polling its operation sees it end), or per poll of the
    run if that is sooner."""
    as_of: datetime | Literal["now"] | None = None
    """The server's "now": conversations that have not arrived yet are not served, and those
    still going are served with the turns so far and no endTime. "now": the wall clock, read at
    each request, so conversations arrive as time passes (a schedule's runs find new ones).
    None: everything, finished."""

    @property
    def as_of_nanos(self) -> int | None:
        if self.as_of is None:
            return None
        if self.as_of == "now":
            return time.time_ns()
        instant = self.as_of if self.as_of.tzinfo else self.as_of.replace(tzinfo=UTC)
        return (instant - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000

    def __post_init__(self) -> None:
        if not 1 <= self.page_size_default <= self.page_size_max:
            raise ValueError("need 1 <= page_size_default <= page_size_max")
        for name in ("summary_fraction", "short_page_fraction"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1]")
        if self.response_mode not in ("json", "sse", "mixed"):
            raise ValueError(f"unknown response_mode {self.response_mode!r}")
