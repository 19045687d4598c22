"""A golden evaluation result's replayed turns: each expectation of the turn (a tool call or none,
its mocked or checked response, a transfer, variable updates, the agent's response with its
comparison and metric overrides, the custom payload observed) with what the agent did, and the
turn's scores and latencies; and the agent's observed messages, which a scenario's judged
response reuses."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from pipelines.ces.simulator.corpus.agent_content import (
    TOOL_ERRORS,
    agent_audio,
    chips,
    new_call_id,
    tool_values,
)
from pipelines.ces.simulator.corpus.catalog import Agent, AppCatalog, Tool
from pipelines.ces.simulator.corpus.latencies import span_latencies, tool_call_latencies
from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_MILLI,
    between,
    duration,
    seeded_random,
    stable_hex,
    timestamp,
)
from pipelines.ces.simulator.corpus.replayed_turns import ReplayedTurn

_SIMILARITY_LABELS = ("Very different", "Different", "Somewhat similar", "Similar", "Equivalent")
_COMPARISONS = ("SEMANTIC_SIMILARITY", "EQUALS", "CONTAINS", None)
"""How an expected response is compared; None leaves `comparisonType` out (semantic similarity)."""


@dataclass
class Step:
    """A tool call of a replayed turn: what the golden expected and what the agent did."""

    tool: Tool
    call: dict[str, Any]
    """The ToolCall without its args (identifier, id, display name)."""
    expected_args: dict[str, Any]
    observed_args: dict[str, Any]
    correctness: float
    """How many of the expected parameters the observed call matched (0-1)."""
    expected_response: dict[str, Any]
    observed_response: dict[str, Any]
    mocked: bool
    """The golden mocks the tool's response (always for a client function, which has no backend)."""


def tool_step(rng: random.Random, extra: random.Random, catalog: AppCatalog, tool: Tool, good: bool) -> Step:
    call, args = tool_call(rng, catalog, tool)
    observed_args = dict(args) if good else {**args, **{name: "?" for name in list(args)[:1]}}
    correctness = 1.0 if good else round(rng.uniform(0.2, 0.7), 3)
    expected = {"output": tool_values(extra, catalog, tool.output)}
    mocked = tool.client or extra.random() < 0.25
    if good or mocked:
        observed = expected
    else:
        code, message = extra.choice(TOOL_ERRORS[:2])  # a golden's tools fail transiently
        observed = {"error": {"code": code, "message": message}}
    return Step(tool, call, args, observed_args, correctness, expected, observed, mocked)


@dataclass
class _Response:
    """The agent response a golden turn expects, what the agent said, and whether it is skipped."""

    expected: str
    said: str
    skipped: bool


def turn_replay(
    rng: random.Random,
    catalog: AppCatalog,
    conversation: str,
    clock: int,
    passed: bool,
    failing_turn: bool,
    first: bool,
    audio: bool,
    recorded: ReplayedTurn | None = None,
) -> tuple[dict[str, Any], int]:
    """One replayed turn of a golden result, and the clock after it; a failed result fails its
    first turn. A turn calls a tool, or none (the golden then expects no tool calls, and a tool
    the agent calls anyway is the one it would have called), may hand over to a sub-agent and
    update variables, and ends in the agent's response. `recorded`: what the replayed
    conversation's turn records, None when it has no such turn: the tools it called (the golden
    checks the first), when it began and ended, its tool calls' and spans' latencies."""
    good = passed or not failing_turn
    extra = seeded_random(conversation, clock, "expectations")
    calls_tool = extra.random() >= 0.2
    tool = rng.choice(catalog.tools)
    if recorded is not None:
        calls_tool, tool = bool(recorded.tools), recorded.tools[0] if recorded.tools else tool
    latencies, after_tools = tool_call_latencies(rng, [tool], clock)
    spans, after_spans = span_latencies(rng, catalog, clock)
    if not calls_tool:
        spans = [span for span in spans if span.get("type") != "TOOL"]
    similarity = between(rng, 3, 4) if good else between(rng, 0, 2)
    tool_score = round(rng.uniform(0.8, 1.0) if good else rng.uniform(0.0, 0.7), 3)
    step = tool_step(rng, extra, catalog, tool, good)
    expected_text = rng.choice(catalog.agent_texts)
    said = expected_text if good else rng.choice(catalog.agent_texts)
    # A failed turn fails an expectation: the tool call, a tool called where the golden calls
    # none, or (when the replayed turn called none) the response, then never skipped.
    skippable = good or calls_tool or recorded is None
    response = _Response(expected_text, said, skipped=rng.random() < 0.1 and skippable)
    end = max(after_tools, after_spans)
    if recorded is not None:  # the turn took what its conversation's turn took
        clock, end = recorded.start, recorded.end
        latencies, spans = list(recorded.tool_latencies), list(recorded.span_latencies)
    replay: dict[str, Any] = {
        "conversation": conversation,
        "expectationOutcome": _golden_outcomes(
            extra, catalog, step, calls_tool, response, good, similarity, first, audio, end, recorded is None
        ),
        "hallucinationResult": {
            "score": 0 if good else 1,
            "label": "No hallucination" if good else "Hallucination",
            "explanation": "Every claim is grounded in a tool response."
            if good
            else "The delivery date was not in any tool response.",
        },
        "toolInvocationScore": tool_score,
        "toolOrderedInvocationScore": round(tool_score * rng.uniform(0.85, 1.0), 3),
        "turnLatency": duration(end - clock),
    }
    if calls_tool:
        replay["toolCallLatencies"] = latencies
    replay["semanticSimilarityResult"] = _similarity(similarity, good, labelled=True)
    replay["overallToolInvocationResult"] = {
        "toolInvocationScore": tool_score,
        "outcome": "PASS" if good else "FAIL",
    }
    replay["spanLatencies"] = spans
    if not good and rng.random() < 0.3:
        replay["errorInfo"] = {
            "errorType": "METRIC_CALCULATION_FAILURE",
            "errorMessage": "tool order could not be compared",
            "sessionId": f"session-{stable_hex(conversation, clock, length=12)}",
            "userFacingErrorMessage": "Some scores of this turn could not be computed.",
        }
    return replay, end + between(rng, 200, 900) * NANOS_PER_MILLI


def _similarity(score: int, good: bool, labelled: bool) -> dict[str, Any]:
    """A SemanticSimilarityResult (score 0-4); `labelled`: with the judge's label and explanation."""
    out: dict[str, Any] = {"score": score}
    if labelled:
        out["label"] = _SIMILARITY_LABELS[score]
        out["explanation"] = (
            "The response carries the expected facts." if good else "The response omits the order status."
        )
    out["outcome"] = "PASS" if good else "FAIL"
    return out


def _golden_outcomes(
    rng: random.Random,
    catalog: AppCatalog,
    step: Step,
    calls_tool: bool,
    response: _Response,
    good: bool,
    similarity: int,
    first: bool,
    audio: bool,
    at: int,
    strays: bool,
) -> list[dict[str, Any]]:
    """The golden turn's expectations in the order the turn unfolds, each with what was observed:
    the tool call (or none), its mocked or checked response, a transfer, variable updates, the
    agent's response, and the custom payload it sent (observed only, always SKIPPED). `strays`:
    a failed turn that the golden expects to call no tool may have called one (not when the
    replayed conversation's turn shows it called none)."""
    out: list[dict[str, Any]] = []
    verdict = "PASS" if good else "FAIL"
    if calls_tool:
        out.extend(_tool_outcomes(rng, step, good))
    else:
        item: dict[str, Any] = {"expectation": {"noToolCalls": True}}
        stray = strays and not good
        if stray:  # the agent called a tool the golden does not call
            item["observedToolCall"] = {**step.call, "args": step.observed_args}
        item["outcome"] = "FAIL" if stray else "PASS"
        out.append(item)
    transfer, variables = None, None
    if catalog.sub_agents and rng.random() < 0.25:
        expected_agent = rng.choice(catalog.sub_agents)
        observed_agent = expected_agent if good else rng.choice([catalog.root_agent, *catalog.sub_agents])
        item = {"expectation": {"agentTransfer": agent_transfer(expected_agent)}}
        if observed_agent is not catalog.root_agent:  # the root agent kept the conversation: no transfer
            item["observedAgentTransfer"] = agent_transfer(observed_agent)
            transfer = observed_agent
        item["outcome"] = "PASS" if observed_agent == expected_agent else "FAIL"
        out.append(item)
    if calls_tool and rng.random() < 0.4:
        expected_variables = {"last_tool": step.tool.display_name, "resolved": True}
        variables = expected_variables if good else {**expected_variables, "resolved": False}
        out.append({"expectation": {"updatedVariables": expected_variables}, "outcome": verdict})
    expectation, judged = _response_expectation(rng, response, audio)
    steps = [step] if calls_tool else []
    observed = observed_response(rng, response.said, good, audio, at, steps, transfer, variables)
    payload = chips(rng) if rng.random() < 0.25 else None
    spoke = says_something(observed)
    if spoke:
        defaults = [{"defaultVariables": default_variables()}] if first and rng.random() < 0.5 else []
        observed = with_chunks(observed, before=defaults, after=[{"payload": payload}] if payload else [])
    outcome: dict[str, Any] = {
        "expectation": expectation,
        "observedAgentResponse": observed,
        "outcome": "SKIPPED" if response.skipped else verdict,
    }
    if judged:
        outcome["semanticSimilarityResult"] = _similarity(similarity, good, labelled=rng.random() < 0.7)
    out.append(outcome)
    if spoke and payload:
        out.append({"observedPayload": payload, "outcome": "SKIPPED"})
    return out


def _tool_outcomes(rng: random.Random, step: Step, good: bool) -> list[dict[str, Any]]:
    """A golden turn's tool call expectation (with a note and a threshold override on some),
    after the response it mocks or before the response it checks."""
    out: list[dict[str, Any]] = []
    verdict = "PASS" if good else "FAIL"
    if step.mocked:
        mock = {**step.call, "response": step.expected_response}
        out.append({"expectation": {"mockToolResponse": mock}, "outcome": "SKIPPED"})
    expectation: dict[str, Any] = {"toolCall": {**step.call, "args": step.expected_args}}
    if rng.random() < 0.5:
        expectation["note"] = f"Check_{step.tool.display_name.title().replace('_', '')}_Called"
    if rng.random() < 0.3:
        expectation["expectationLevelMetricsThresholdsOverride"] = {
            "toolInvocationParameterCorrectnessThreshold": 0.5
        }
    out.append(
        {
            "expectation": expectation,
            "observedToolCall": {**step.call, "args": step.observed_args},
            "outcome": verdict,
            "toolInvocationResult": {
                "parameterCorrectnessScore": step.correctness,
                "outcome": verdict,
                "explanation": "All parameters match."
                if good
                else "One parameter differs from the golden call.",
            },
        }
    )
    if not step.mocked:
        out.append(
            {
                "expectation": {"toolResponse": {**step.call, "response": step.expected_response}},
                "observedToolResponse": {**step.call, "response": step.observed_response},
                "outcome": "PASS" if step.observed_response == step.expected_response else "FAIL",
            }
        )
    return out


def _response_expectation(
    rng: random.Random, response: _Response, audio: bool
) -> tuple[dict[str, Any], bool]:
    """A golden turn's expected agent response with how it is compared and the metrics it
    overrides, and whether its semantic similarity is judged (not for an exact or substring
    comparison, a skipped expectation, or one that switches the metric off)."""
    expectation: dict[str, Any] = {"agentResponse": message([spoken(response.expected, audio)])}
    comparison = rng.choice(_COMPARISONS)
    if comparison:
        expectation["comparisonType"] = comparison
    judged = comparison in (None, "SEMANTIC_SIMILARITY")
    if response.skipped:
        expectation["skipEvaluation"] = True
        judged = False
    roll = rng.random()
    if roll < 0.15:
        # Set without its flag: the metric is switched off for this expectation.
        expectation["agentResponseSemanticSimilarityMetricsConfigOverride"] = {}
        judged = False
    elif roll < 0.3:
        expectation["agentResponseSemanticSimilarityMetricsConfigOverride"] = {
            "enableSemanticSimilarityMetrics": True
        }
    if rng.random() < 0.3:
        expectation["agentResponseHallucinationMetricsConfigOverride"] = (
            {"enableHallucinationMetrics": True} if rng.random() < 0.6 else {}
        )
    return expectation, judged


def says_something(message: dict[str, Any]) -> bool:
    """Whether an agent message says something (text or transcript), rather than only calling tools."""
    return any(chunk.keys() & {"text", "transcript"} for chunk in message["chunks"])


def observed_response(
    rng: random.Random,
    said: str,
    good: bool,
    audio: bool,
    at: int,
    steps: list[Step],
    transfer: Agent | None,
    variables: dict[str, Any] | None,
) -> dict[str, Any]:
    """The agent's last message of a replayed turn: what it `said`, after the transfer and
    variable updates it made. A failed turn may instead end on the agent's tool call (a client
    function waiting for the client) or on its tool's response, with nothing said after it."""
    ending = "text" if good or not steps else rng.choice(("text", "tool_call", "tool_response"))
    if ending == "tool_call":
        chunks = [{"toolCall": {**step.call, "args": step.observed_args}} for step in steps]
    elif ending == "tool_response":
        chunks = [{"toolResponse": {**step.call, "response": step.observed_response}} for step in steps]
    else:
        chunks = []
        if transfer is not None:
            chunks.append({"agentTransfer": agent_transfer(transfer)})
        if variables is not None:
            chunks.append({"updatedVariables": variables})
        chunks.append(spoken(said, audio))
        if audio:
            chunks.append(agent_audio(rng))
    return message(chunks, at)


def message(chunks: list[dict[str, Any]], at: int | None = None) -> dict[str, Any]:
    """A Message of the agent; an observed one carries its time."""
    out: dict[str, Any] = {"role": "agent", "chunks": chunks}
    if at is not None:
        out["eventTime"] = timestamp(at)
    return out


def with_chunks(
    message: dict[str, Any], before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> dict[str, Any]:
    return {**message, "chunks": [*before, *message["chunks"], *after]}


def spoken(text: str, audio: bool) -> dict[str, Any]:
    """What the agent says: a text chunk, or over the audio channel the transcript of its speech."""
    return {"transcript": text} if audio else {"text": text}


def agent_transfer(agent: Agent) -> dict[str, Any]:
    return {"targetAgent": agent.name, "displayName": agent.display_name}


def default_variables() -> dict[str, Any]:
    return {"customer_tier": "unknown", "max_refund": 500}


def tool_call(rng: random.Random, catalog: AppCatalog, tool: Tool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ToolCall of `tool` without its args, and args for it."""
    args = tool_values(rng, catalog, tool.args)
    call = {**tool.identifier(), "id": new_call_id(rng), "displayName": tool.display_name}
    return call, args
