"""Which conversations a scale holds, known without building them: keys, names, headers, arrival.

A conversation's cheap facts (name, start time, source, timestamp precision) come from one hash
of its coordinates, so a list page can filter and order thousands of candidates cheaply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_DAY,
    NANOS_PER_MICRO,
    NANOS_PER_MILLI,
    NANOS_PER_SECOND,
    epoch_nanos,
    stable_digest,
)
from pipelines.ces.simulator.corpus.scale import SimulatorScale

SOURCES = ("LIVE", "SIMULATOR", "EVAL", "AGENT_TOOL")
_SOURCE_CUTS = (178, 208, 238)  # of 256: ~70% LIVE, ~12% SIMULATOR, ~12% EVAL, ~6% AGENT_TOOL
_QUANTA = (NANOS_PER_MILLI, NANOS_PER_MICRO, 1)
_ID_PATTERN = re.compile(r"(\d{4})(\d{2})(\d{2})-(\d{6})-([0-9a-f]{8})")


@dataclass(frozen=True)
class ConversationKey:
    """Coordinates of one conversation: app index, day index within the window, index within the day."""

    app: int
    day: int
    index: int


@dataclass(frozen=True)
class ConversationHeader:
    """What listing needs to know about a conversation without building it."""

    key: ConversationKey
    name: str
    start: int
    """startTime in nanoseconds since the epoch; always inside the conversation's UTC day."""
    source: str
    quantum: int
    """Timestamp precision of this conversation in nanoseconds (1e6, 1e3 or 1)."""


def conversation_header(scale: SimulatorScale, key: ConversationKey) -> ConversationHeader:
    """Name, start time, source and precision of the conversation at `key`, from one hash.

    The id reads `YYYYMMDD-NNNNNN-xxxxxxxx` (day, index, 8 hex digits of the hash): opaque-looking,
    yet `resolve_conversation_name` can map it back, and a tampered id does not resolve.
    """
    app = scale.app_names[key.app]
    day = scale.start_date + timedelta(days=key.day)
    digest = stable_digest(scale.seed, "conversation", app, key.day, key.index)
    slot = NANOS_PER_DAY // max(scale.conversations_per_day, 1)
    offset = int.from_bytes(digest[0:4], "big") * slot // 2**32
    start = epoch_nanos(day) + key.index * slot + offset
    quantum = _QUANTA[digest[5] % len(_QUANTA)]
    start -= start % (NANOS_PER_SECOND if digest[6] < 64 else quantum)
    source = SOURCES[sum(digest[4] >= cut for cut in _SOURCE_CUTS)]
    conversation_id = f"{day:%Y%m%d}-{key.index:06d}-{digest[8:12].hex()}"
    return ConversationHeader(key, f"{app}/conversations/{conversation_id}", start, source, quantum)


@lru_cache(maxsize=64)
def eval_conversations(scale: SimulatorScale, app: int) -> tuple[tuple[int, str], ...]:
    """(start, name) of the app's EVAL conversations, by start: what its evaluation results replayed."""
    keys = (
        ConversationKey(app, day, index)
        for day in range(scale.days)
        for index in range(scale.conversations_per_day)
    )
    headers = (conversation_header(scale, key) for key in keys)
    return tuple(sorted((header.start, header.name) for header in headers if header.source == "EVAL"))


def resolve_conversation_name(scale: SimulatorScale, name: str) -> ConversationKey | None:
    """The key of a conversation this scale serves under `name`, or None (the caller answers NOT_FOUND)."""
    app_name, sep, conversation_id = name.rpartition("/conversations/")
    app = scale.app_index(app_name) if sep else None
    match = _ID_PATTERN.fullmatch(conversation_id)
    if app is None or match is None:
        return None
    year, month, day_of_month, index, _ = match.groups()
    try:
        day = (date(int(year), int(month), int(day_of_month)) - scale.start_date).days
    except ValueError:
        return None
    if not (0 <= day < scale.days and int(index) < scale.conversations_per_day):
        return None
    key = ConversationKey(app, day, int(index))
    return key if conversation_header(scale, key).name == name else None


def arrival(scale: SimulatorScale, header: ConversationHeader) -> int:
    """When the conversation first shows up in listings (ns): most as soon as they start (and
    are listed while still going), some hours or up to a day and a half late, as logs that reach
    the API late do."""
    draw = stable_digest(scale.seed, "arrival", header.name)
    roll, spread = draw[0] / 256, int.from_bytes(draw[1:5], "big") / 2**32
    if roll < 0.85:
        delay_seconds = 0.0
    elif roll < 0.95:
        delay_seconds = 3600 + spread * 5 * 3600
    else:
        delay_seconds = 12 * 3600 + spread * 24 * 3600
    return header.start + int(delay_seconds * NANOS_PER_SECOND)


def visible(scale: SimulatorScale, header: ConversationHeader, as_of: int | None) -> bool:
    """Whether a server whose clock reads `as_of` (ns; None: the end of time) serves it yet."""
    return as_of is None or arrival(scale, header) <= as_of
