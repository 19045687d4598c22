"""Corpus shapes: the simulator's conversations, or reshaped the way real CES traces differ.

`real` keeps each conversation's structure (turns, messages, chunks, spans) and changes what
the simulator keeps uniform: about 1,200 characters of text per conversation, span attributes
of ~135 bytes with nested `args`/`response` structs inside `Tool` spans, and timestamps that
mix 3, 6 and 9 fractional digits. The change is seeded by the conversation's name, so the
corpus written to the lake and the simulator serving it (`SimulatedFaults(corrupt=…)`) agree.
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

SHAPES = ("simulator", "real")
TEXT_PER_CONVERSATION = 1_200
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{6})Z$")
_WORDS = [
    "order",
    "refund",
    "shipping",
    "address",
    "account",
    "billing",
    "invoice",
    "delivery",
    "package",
    "warranty",
    "return",
    "payment",
    "card",
    "update",
    "status",
    "tracking",
    "number",
    "replacement",
    "subscription",
    "plan",
    "upgrade",
    "cancel",
]


def reshape(conversation: dict[str, Any], shape: str) -> dict[str, Any]:
    """The conversation in `shape` (a new object for `real`; unchanged for `simulator`)."""
    if shape == "simulator":
        return conversation
    if shape != "real":
        raise ValueError(f"unknown corpus shape {shape!r}; known: {', '.join(SHAPES)}")
    name = str(conversation.get("name", ""))
    rng = random.Random(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big"))
    reshaped = _walk(conversation, rng)
    _set_text(reshaped, rng)
    return reshaped


def _walk(value: Any, rng: random.Random) -> Any:
    """A copy with every timestamp respelled and every span's attributes enriched."""
    if isinstance(value, dict):
        copy = {key: _walk(item, rng) for key, item in value.items()}
        if "childSpans" in copy or ("duration" in copy and "startTime" in copy):
            copy["attributes"] = _attributes(copy.get("name"), copy.get("attributes") or {}, rng)
        return copy
    if isinstance(value, list):
        return [_walk(item, rng) for item in value]
    if isinstance(value, str):
        match = _TIMESTAMP.match(value)
        if match:
            digits = rng.choice((3, 6, 9))
            fraction = (match.group(2) + f"{rng.randrange(1000):03d}")[:digits]
            return f"{match.group(1)}.{fraction}Z"
    return value


def _attributes(name: Any, attributes: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A span's attributes of ~135 bytes: a Tool span's with nested arguments and response."""
    enriched = dict(attributes)
    if name == "Tool" or str(name).startswith("TOOL:"):
        enriched["args"] = {
            "order": {
                "id": f"ORD-{rng.randrange(10**6):06d}",
                "items": [rng.randrange(100), rng.randrange(100)],
            },
            "locale": "en-US",
        }
        enriched["response"] = {
            "status": rng.choice(("OK", "NOT_FOUND", "PENDING")),
            "data": {"eta_days": rng.randrange(1, 9), "carrier": rng.choice(("ups", "dhl", "usps"))},
        }
    else:
        enriched.setdefault("agent", "Support Concierge")
        enriched["trace"] = {"region": rng.choice(("us-central1", "europe-west4")), "attempt": 1}
    return enriched


def _set_text(conversation: dict[str, Any], rng: random.Random) -> None:
    """Spread about `TEXT_PER_CONVERSATION` characters over the conversation's text chunks."""
    chunks = [
        chunk
        for turn in conversation.get("turns", [])
        for message in turn.get("messages", [])
        for chunk in message.get("chunks", [])
        if isinstance(chunk.get("text"), str)
    ]
    if not chunks:
        return
    share = TEXT_PER_CONVERSATION // len(chunks)
    for chunk in chunks:
        words: list[str] = []
        while sum(len(word) + 1 for word in words) < share:
            words.append(rng.choice(_WORDS))
        chunk["text"] = " ".join(words)[: max(1, share)]
