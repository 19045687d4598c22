"""Span trees shaped like the traces CES attaches to each turn.

Google's own trace tooling (cxas-scrapi `latency_parser`) reads turn spans whose children are
named `LLM` (agent, model, token counts, time to first chunk), `Tool` (name, agent), `Callback`
(agent, stage, description), `Guardrail` (agent, name), and `VAD`/`TTS` for audio; some names
carry a prefix (`TOOL:lookup_order`, `AGENT:billing`); the root carries `perceived latency (ms)`
and `input types`. Spans are built with a `Clock` that only moves forward, so every child lies
inside its parent and `duration` is exactly `endTime - startTime`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from pipelines.ces.simulator.corpus.protojson import NANOS_PER_MILLI, duration, timestamp

ROOT_SPAN_NAME = "Turn"


@dataclass
class Span:
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    children: list[Span] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Proto3 JSON of google.cloud.ces.v1.Span (field order as the proto declares it)."""
        out: dict[str, Any] = {
            "name": self.name,
            "startTime": timestamp(self.start),
            "endTime": timestamp(self.end),
            "duration": duration(self.end - self.start),
        }
        if self.attributes:
            out["attributes"] = self.attributes
        if self.children:
            out["childSpans"] = [child.to_json() for child in self.children]
        return out


def _preorder_leaves(span: Span) -> list[Span]:
    flat = [span]
    for child in span.children:
        flat.extend(_preorder_leaves(child))
    span.children = []
    return flat


def clamp_depth(root: Span, max_depth: int) -> None:
    """Re-parent spans nested deeper than `max_depth` levels (root = level 1) onto the deepest level.

    The spans are kept (a Tool span must exist for every tool call), in the order a depth-first
    walk meets them; their times already lie inside every ancestor, so the tree stays consistent.
    """
    if max_depth <= 2:
        root.children = [leaf for child in root.children for leaf in _preorder_leaves(child)]
        return
    for child in root.children:
        if child.children:
            clamp_depth(child, max_depth - 1)


class Clock:
    """The current instant inside a conversation, quantised to the conversation's timestamp precision.

    Real services stamp with millisecond, microsecond or nanosecond precision; one conversation
    uses one quantum, so its timestamps carry 3, 6 or 9 fractional digits (or none on a whole
    second).
    """

    def __init__(self, now: int, quantum: int, rng: random.Random):
        self.now = now - now % quantum
        self.quantum = quantum
        self.rng = rng

    def span_of(self, min_ms: float, max_ms: float) -> int:
        """A random positive length in [min_ms, max_ms] milliseconds, in nanoseconds, on the quantum."""
        nanos = int((min_ms + (max_ms - min_ms) * self.rng.random()) * NANOS_PER_MILLI)
        return max(self.quantum, nanos - nanos % self.quantum)

    def advance(self, min_ms: float, max_ms: float) -> int:
        self.now += self.span_of(min_ms, max_ms)
        return self.now

    def open(self, name: str, attributes: dict[str, Any], gap_ms: float = 2.0) -> Span:
        """Start a span a short gap from now; close it with `close`."""
        self.advance(0.05, gap_ms)
        return Span(name, self.now, self.now, attributes)

    def close(self, span: Span, min_ms: float = 0.0, max_ms: float = 0.0) -> Span:
        """End `span` after its children (and at least `min_ms`..`max_ms` after its start)."""
        if max_ms > 0:
            self.now = max(self.now, span.start + self.span_of(min_ms, max_ms))
        span.end = max(self.now, span.start + self.quantum)
        self.now = span.end
        return span

    def leaf(self, name: str, attributes: dict[str, Any], min_ms: float, max_ms: float) -> Span:
        return self.close(self.open(name, attributes), min_ms, max_ms)

    def instant(self, name: str, attributes: dict[str, Any]) -> Span:
        """A span of exactly one quantum, e.g. a no-op callback ("0.000000001s" at ns precision)."""
        span = self.open(name, attributes, gap_ms=0.2)
        span.end = span.start + self.quantum
        self.now = span.end
        return span
