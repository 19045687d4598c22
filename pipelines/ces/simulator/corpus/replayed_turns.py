"""What a golden result's replayed turn reports, read from the turn of the conversation it
replayed: when the turn began and ended, the tools it called, and the latencies of its tool
calls and spans. A result then says what its conversation records."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pipelines.ces.simulator.corpus.catalog import AppCatalog, Callback, Tool, app_catalog
from pipelines.ces.simulator.corpus.conversations import conversation_with_traces
from pipelines.ces.simulator.corpus.headers import (
    ConversationHeader,
    conversation_header,
    resolve_conversation_name,
)
from pipelines.ces.simulator.corpus.latencies import llm_span_latency, span_latency, tool_call_latency
from pipelines.ces.simulator.corpus.scale import SimulatorScale
from pipelines.ces.simulator.corpus.traces import Span


@dataclass(frozen=True)
class ReplayedTurn:
    start: int
    end: int
    """When the turn's root span began and ended (epoch nanoseconds)."""
    tools: tuple[Tool, ...]
    """The tools the turn called, each once, in order."""
    tool_latencies: tuple[dict[str, Any], ...]
    """A ToolCallLatency per call the agent made (the root span's tool spans)."""
    span_latencies: tuple[dict[str, Any], ...]
    """A SpanLatency per LLM call, tool, callback, guardrail and sub-agent span of the turn, in order."""


def corpus_turns(scale: SimulatorScale, name: str) -> tuple[ReplayedTurn, ...]:
    """`replayed_turns` of the corpus's conversation `name`; none for a name this scale does not serve."""
    key = resolve_conversation_name(scale, name)
    return () if key is None else replayed_turns(scale, conversation_header(scale, key))


@lru_cache(maxsize=1024)
def replayed_turns(scale: SimulatorScale, header: ConversationHeader) -> tuple[ReplayedTurn, ...]:
    """What each turn of the conversation `header` heads records, as an evaluation result that
    replayed it reports it; none for one that predates turns (its top-level messages say no
    turn's calls or times)."""
    served, roots = conversation_with_traces(scale, header)
    if "turns" not in served:
        return ()
    catalog = app_catalog(scale, header.key.app)
    return tuple(
        replayed_turn(catalog, root, called)
        for root, called in zip(roots, _tools_by_turn(served), strict=True)
    )


def _tools_by_turn(served: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
    """The display names of the tools each turn of a conversation called, in order."""
    return tuple(
        tuple(
            chunk["toolCall"]["displayName"]
            for message in turn["messages"]
            if message["role"] == "agent"
            for chunk in message["chunks"]
            if "toolCall" in chunk
        )
        for turn in served["turns"]
    )


def replayed_turn(catalog: AppCatalog, root: Span, called: Sequence[str]) -> ReplayedTurn:
    """The turn whose span tree is `root` and whose agent called the tools named `called`."""
    tools = {tool.display_name: tool for tool in catalog.tools}
    guardrails = {guardrail.display_name: guardrail for guardrail in catalog.guardrails}
    spans = []
    for span in _descendants(root):
        attributes = span.attributes
        if span.name == "LLM":
            spans.append(llm_span_latency(attributes["model"], attributes["agent"], span.start, span.end))
        elif span.name == "Tool" and attributes["name"] in tools:
            spans.append(span_latency("TOOL", tools[attributes["name"]], span.start, span.end))
        elif span.name == "Callback":
            callback = Callback(attributes["stage"], attributes["description"])
            spans.append(span_latency("USER_CALLBACK", callback, span.start, span.end))
        elif span.name == "Guardrail" and attributes["name"] in guardrails:
            spans.append(span_latency("GUARDRAIL", guardrails[attributes["name"]], span.start, span.end))
        elif span.name.startswith("AGENT:"):  # a sub-agent's run: no type of its own
            spans.append(span_latency(None, attributes["agent"], span.start, span.end))
    calls = tuple(
        tool_call_latency(tools[span.attributes["name"]], span.start, span.end)
        for span in root.children
        if span.name == "Tool" and span.attributes["name"] in tools
    )
    turn_tools = tuple(tools[name] for name in dict.fromkeys(called) if name in tools)
    return ReplayedTurn(root.start, root.end, turn_tools, calls, tuple(spans))


def _descendants(span: Span) -> Iterator[Span]:
    for child in span.children:
        yield child
        yield from _descendants(child)
