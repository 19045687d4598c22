"""The tool call and span latencies an evaluation result reports, one after another from a clock
(epoch nanoseconds)."""

from __future__ import annotations

import random
from typing import Any

from pipelines.ces.simulator.corpus.catalog import AppCatalog, Callback, Guardrail, Tool
from pipelines.ces.simulator.corpus.protojson import NANOS_PER_MILLI, between, duration, timestamp

_SPAN_TYPES = ("TOOL", "USER_CALLBACK", "GUARDRAIL", "LLM", None)
"""Every SpanLatency.Type; None leaves `type` out (TYPE_UNSPECIFIED)."""


def tool_call_latency(tool: Tool, start: int, end: int) -> dict[str, Any]:
    """A ToolCallLatency: the call of `tool` from `start` to `end` (epoch nanoseconds)."""
    return {
        "tool": tool.tool or f"{tool.toolset}/tools/{tool.tool_id}",
        "displayName": tool.display_name,
        **_times(start, end),
    }


def span_latency(
    kind: str | None, subject: Tool | Callback | Guardrail | str, start: int, end: int
) -> dict[str, Any]:
    """A SpanLatency of `kind` (None: TYPE_UNSPECIFIED, left out) from `start` to `end`: of a
    tool, a callback, a guardrail, or a display name alone (an LLM call: `llm_span_latency`)."""
    return {**_subject(subject), **({"type": kind} if kind else {}), **_times(start, end)}


def llm_span_latency(model: str, agent: str, start: int, end: int) -> dict[str, Any]:
    """A SpanLatency of type LLM: `agent`'s call of `model` from `start` to `end`."""
    return {"model": model, **span_latency("LLM", agent, start, end)}


def _subject(subject: Tool | Callback | Guardrail | str) -> dict[str, str]:
    if isinstance(subject, Tool):
        named = (
            {"toolset": subject.identifier()["toolsetTool"]}
            if subject.toolset
            else {"resource": subject.tool}
        )
        return {**named, "displayName": subject.display_name}
    if isinstance(subject, Callback):
        return {"callback": subject.stage, "displayName": subject.description}
    if isinstance(subject, Guardrail):
        return {"resource": subject.name, "displayName": subject.display_name}
    return {"displayName": subject}


def _times(start: int, end: int) -> dict[str, str]:
    return {
        "startTime": timestamp(start),
        "endTime": timestamp(end),
        "executionLatency": duration(end - start),
    }


def tool_call_latencies(
    rng: random.Random, tools: list[Tool], clock: int
) -> tuple[list[dict[str, Any]], int]:
    """ToolCallLatency entries for calls made one after another from `clock`; the clock after."""
    out = []
    for tool in tools:
        start = clock + between(rng, 50, 400) * NANOS_PER_MILLI
        length = between(rng, 80, 2_500) * NANOS_PER_MILLI
        out.append(tool_call_latency(tool, start, start + length))
        clock = start + length
    return out, clock


def span_latencies(rng: random.Random, catalog: AppCatalog, clock: int) -> tuple[list[dict[str, Any]], int]:
    """SpanLatency entries of a turn: one of each type, one after another; the clock after."""
    out = []
    for kind in _SPAN_TYPES:
        start = clock + between(rng, 5, 60) * NANOS_PER_MILLI
        clock = start + between(rng, 20, 1_800) * NANOS_PER_MILLI
        if kind == "TOOL":
            out.append(span_latency(kind, rng.choice(catalog.tools), start, clock))
        elif kind == "USER_CALLBACK":
            out.append(span_latency(kind, rng.choice(catalog.callbacks), start, clock))
        elif kind == "GUARDRAIL":
            out.append(span_latency(kind, rng.choice(catalog.guardrails), start, clock))
        elif kind == "LLM":
            model = rng.choice(catalog.text_models)
            out.append(llm_span_latency(model, catalog.root_agent.display_name, start, clock))
        else:
            out.append(span_latency(None, "agent turn", start, clock))
    return out, clock
