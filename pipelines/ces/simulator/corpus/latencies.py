"""The tool call and span latencies an evaluation result reports, one after another from a clock
(epoch nanoseconds)."""

from __future__ import annotations

import random
from typing import Any

from pipelines.ces.simulator.corpus.catalog import AppCatalog, Tool
from pipelines.ces.simulator.corpus.protojson import NANOS_PER_MILLI, between, duration, timestamp

_SPAN_TYPES = ("TOOL", "USER_CALLBACK", "GUARDRAIL", "LLM", None)
"""Every SpanLatency.Type; None leaves `type` out (TYPE_UNSPECIFIED)."""


def tool_call_latencies(
    rng: random.Random, tools: list[Tool], clock: int
) -> tuple[list[dict[str, Any]], int]:
    """ToolCallLatency entries for calls made one after another from `clock`; the clock after."""
    out = []
    for tool in tools:
        start = clock + between(rng, 50, 400) * NANOS_PER_MILLI
        length = between(rng, 80, 2_500) * NANOS_PER_MILLI
        out.append(
            {
                "tool": tool.tool or f"{tool.toolset}/tools/{tool.tool_id}",
                "displayName": tool.display_name,
                "startTime": timestamp(start),
                "endTime": timestamp(start + length),
                "executionLatency": duration(length),
            }
        )
        clock = start + length
    return out, clock


def span_latencies(rng: random.Random, catalog: AppCatalog, clock: int) -> tuple[list[dict[str, Any]], int]:
    """SpanLatency entries of a turn: one of each type, one after another; the clock after."""
    out = []
    for kind in _SPAN_TYPES:
        start = clock + between(rng, 5, 60) * NANOS_PER_MILLI
        length = between(rng, 20, 1_800) * NANOS_PER_MILLI
        entry: dict[str, Any] = {}
        if kind == "TOOL":
            tool = rng.choice(catalog.tools)
            entry = {"toolset": tool.identifier()["toolsetTool"]} if tool.toolset else {"resource": tool.tool}
            entry["displayName"] = tool.display_name
        elif kind == "USER_CALLBACK":
            callback = rng.choice(catalog.callbacks)
            entry = {"callback": callback.stage, "displayName": callback.description}
        elif kind == "GUARDRAIL":
            guardrail = rng.choice(catalog.guardrails)
            entry = {"resource": guardrail.name, "displayName": guardrail.display_name}
        elif kind == "LLM":
            entry = {"model": rng.choice(catalog.text_models), "displayName": catalog.root_agent.display_name}
        else:
            entry = {"displayName": "agent turn"}
        if kind:
            entry["type"] = kind
        entry.update(
            startTime=timestamp(start), endTime=timestamp(start + length), executionLatency=duration(length)
        )
        out.append(entry)
        clock = start + length
    return out, clock
