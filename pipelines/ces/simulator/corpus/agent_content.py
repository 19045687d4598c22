"""What an agent sends that conversations and evaluation results alike carry: the audio of its
speech, the chips it offers, its tool calls' ids and values, and the errors its tools answer."""

from __future__ import annotations

import base64
import random
from typing import Any

from pipelines.ces.simulator.corpus.catalog import VALUES, AppCatalog
from pipelines.ces.simulator.corpus.protojson import between

TOOL_ERRORS = (
    ("UNAVAILABLE", "upstream service unavailable"),
    ("DEADLINE_EXCEEDED", "tool call timed out after 10s"),
    ("NOT_FOUND", "no record matches the given id"),
)
"""A tool's failed answers (code, message); the first two are the transient ones."""
PAYLOAD_OPTIONS = ("Track my order", "Talk to an agent", "See return policy", "Book a demo", "Pricing")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def agent_audio(rng: random.Random) -> dict[str, Any]:
    """A chunk of the agent's speech: 16-bit PCM at 24 kHz."""
    return {"blob": {"mimeType": "audio/l16; rate=24000", "data": b64(rng.randbytes(between(rng, 64, 140)))}}


def chips(rng: random.Random) -> dict[str, Any]:
    """A custom payload offering two of PAYLOAD_OPTIONS as chips."""
    options = rng.sample(PAYLOAD_OPTIONS, 2)
    return {"richContent": [[{"type": "chips", "options": [{"text": option} for option in options]}]]}


def new_call_id(rng: random.Random) -> str:
    return f"call_{rng.getrandbits(64):016x}"


def tool_values(rng: random.Random, catalog: AppCatalog, spec: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """A value of each (name, kind) of a tool's arguments or output."""
    return {name: VALUES[kind](rng, catalog) for name, kind in spec}
