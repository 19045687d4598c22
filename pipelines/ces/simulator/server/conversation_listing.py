"""Pages of `list_conversations`, built lazily from candidate positions.

The candidates of a query are the (day, index) slots of the days its time window overlaps (days
outside it are never touched). Position p maps to a slot through a per-day order that is a
seeded affine permutation, and the days themselves come in a seeded order, so results are not in
start-time order and a client cannot use order as a cursor. A page walks positions, checks the
cheap header of each candidate (start time, source) and builds only the conversations it
returns; the walk stops at the page size or after a scan budget, which gives short pages (even
empty ones with a next token) under selective filters, as real servers do. Some pages are also
shortened on purpose (`short_page_fraction`). The conversations started evaluation runs made come
after the corpus's slots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.ces.simulator.corpus.conversations import conversation_of
from pipelines.ces.simulator.corpus.headers import (
    ConversationHeader,
    ConversationKey,
    conversation_header,
    visible,
)
from pipelines.ces.simulator.corpus.protojson import NANOS_PER_DAY, epoch_nanos, stable_int
from pipelines.ces.simulator.server.config import SimulatorConfig
from pipelines.ces.simulator.server.filters import StartTimeRange

_SCAN_BUDGET_PAGES = 4
"""A page inspects at most this many page-sizes of candidates (and at least 200)."""
_UNIT = 2.0**64


@dataclass(frozen=True)
class ConversationQuery:
    app: int
    window: StartTimeRange
    sources: frozenset[str]
    salt: str
    """Fingerprint of the request parameters; seeds which pages come out short."""


@dataclass(frozen=True)
class ConversationPage:
    conversations: list[dict[str, Any]]
    next_position: int | None
    """Where the next page resumes, or None on the last page."""


def summarize(full: dict[str, Any]) -> dict[str, Any]:
    """The listing form without turns (turnCount stays), which a client must hydrate."""
    return {field: value for field, value in full.items() if field not in ("turns", "messages")}


class ConversationListing:
    def __init__(self, config: SimulatorConfig):
        self.config = config
        self.scale = config.scale

    def _days(self, query: ConversationQuery) -> list[int]:
        """Day indices whose UTC day overlaps the query window, in a seeded (non-chronological) order."""
        first = epoch_nanos(self.scale.start_date)
        lower, upper = query.window.lower, query.window.upper
        days = [
            day
            for day in range(self.scale.days)
            if (upper is None or first + day * NANOS_PER_DAY < upper)
            and (lower is None or first + (day + 1) * NANOS_PER_DAY > lower)
        ]
        return sorted(days, key=lambda day: stable_int(self.scale.seed, "day-order", query.app, day))

    def _slot(self, query: ConversationQuery, day: int, offset: int) -> int:
        """The index at `offset` of `day`'s permutation: a*offset + b mod n, with a coprime to n."""
        count = self.scale.conversations_per_day
        mix = stable_int(self.scale.seed, "slot-order", query.app, day)
        step = mix % count or 1
        while math.gcd(step, count) != 1:
            step += 1
        return (step * offset + (mix >> 32)) % count

    def _wanted(self, query: ConversationQuery, page_number: int, size: int) -> int:
        """How many conversations this page will hold at most; a quarter of the short pages are empty."""
        draw = stable_int(self.scale.seed, "short-page", query.salt, page_number) / _UNIT
        if draw >= self.config.short_page_fraction:
            return size
        shortness = draw / self.config.short_page_fraction
        return 0 if shortness < 0.25 else max(1, int(shortness * size))

    def _is_summary(self, header: ConversationHeader) -> bool:
        return stable_int(self.scale.seed, "summary", header.name) / _UNIT < self.config.summary_fraction

    def page(
        self,
        query: ConversationQuery,
        position: int,
        page_number: int,
        size: int,
        made: Sequence[tuple[ConversationHeader, bool]] = (),
    ) -> ConversationPage:
        """The page from `position`; `made`: the conversations started evaluation runs make (and
        whether each is there yet), candidates after the corpus's, in the order they were started."""
        per_day = self.scale.conversations_per_day
        days = self._days(query)
        corpus = len(days) * per_day
        total = corpus + len(made)
        wanted = self._wanted(query, page_number, size)
        as_of = self.config.as_of_nanos  # one instant for the whole page
        budget = max(size * _SCAN_BUDGET_PAGES, 200)
        headers: list[ConversationHeader] = []
        scanned = 0
        while position < total and len(headers) < wanted and scanned < budget:
            there = True
            if position < corpus:
                day = days[position // per_day]
                key = ConversationKey(query.app, day, self._slot(query, day, position % per_day))
                header = conversation_header(self.scale, key)
            else:
                header, there = made[position - corpus]
            if (
                there
                and header.source in query.sources
                and query.window.contains(header.start)
                and visible(self.scale, header, as_of)
            ):
                headers.append(header)
            position += 1
            scanned += 1
        conversations = []
        for header in headers:
            full = conversation_of(self.scale, header, as_of)
            conversations.append(summarize(full) if "turns" in full and self._is_summary(header) else full)
        return ConversationPage(conversations, position if position < total else None)
