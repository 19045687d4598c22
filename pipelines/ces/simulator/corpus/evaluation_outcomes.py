"""What a completed EvaluationResult says about why it passed or failed: a golden result's turn
replays (an expectation of every kind: tool calls or none, mocked and checked tool responses,
transfers, variable updates, the agent's response with its comparison and metric overrides, and
the custom payloads observed; semantic similarity, hallucination, tool invocation scores,
tool-call and span latencies), a scenario result's expectations (tool calls with the responses
they mock, agent responses), rubrics and judgements, and the evaluation expectations' verdicts,
every enum value of the proto among them. Each outcome agrees with what was observed."""

from __future__ import annotations

import base64
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.ces.simulator.corpus.catalog import VALUES, Agent, AppCatalog, Tool
from pipelines.ces.simulator.corpus.evaluations import ResultPlan
from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_MILLI,
    between,
    duration,
    seeded_random,
    stable_hex,
    timestamp,
)

_SPAN_TYPES = ("TOOL", "USER_CALLBACK", "GUARDRAIL", "LLM", None)
"""Every SpanLatency.Type; None leaves `type` out (TYPE_UNSPECIFIED)."""
_EXPECTATION_PROMPTS = (
    # (prompt, explanation when met, explanation when not)
    (
        "The agent confirms the order id before acting.",
        "The order id was read back to the user before the lookup.",
        "The agent acted on the order without reading its id back.",
    ),
    (
        "The agent never promises a refund it cannot issue.",
        "No refund was promised.",
        "The agent promised a refund the order is not eligible for.",
    ),
    (
        "The agent hands billing questions to the billing agent.",
        "The billing question was transferred to the billing agent.",
        "The billing question stayed with the root agent; no transfer happened.",
    ),
)
_RUBRICS = ("Politeness", "Accuracy of order details", "Resolution in few turns")
_SIMILARITY_LABELS = ("Very different", "Different", "Somewhat similar", "Similar", "Equivalent")
_COMPARISONS = ("SEMANTIC_SIMILARITY", "EQUALS", "CONTAINS", None)
"""How an expected response is compared; None leaves `comparisonType` out (semantic similarity)."""
_TOOL_ERRORS = (
    ("UNAVAILABLE", "upstream service unavailable"),
    ("DEADLINE_EXCEEDED", "tool call timed out after 10s"),
)
_PAYLOAD_OPTIONS = ("Track my order", "Talk to an agent", "See return policy", "Book a demo", "Pricing")


def eval_conversation(catalog: AppCatalog, result: ResultPlan, conversations: Sequence[str]) -> str:
    """The EVAL conversation a result replayed (or simulated): one of the app's, picked by the
    result's name; a name no conversation has when the app has none (a result naming a missing
    conversation, as the real service may)."""
    pick = stable_hex(result.name, "conversation", length=16)
    if conversations:
        return conversations[int(pick, 16) % len(conversations)]
    return f"{catalog.app_name}/conversations/eval-{pick}"


def outcome_detail(
    result: ResultPlan,
    rng: random.Random,
    catalog: AppCatalog,
    start: int,
    conversations: Sequence[str],
    channel: str = "TEXT",
) -> dict[str, Any]:
    """`goldenResult` or `scenarioResult` of a completed result whose conversation began at
    `start` (epoch nanoseconds), in one of `conversations` (the app's EVAL ones), evaluated over
    `channel` (TEXT or AUDIO: spoken responses are transcripts with their audio).

    Scores, latencies and verdicts come from `rng`; what only the expectations say (mocks, tool
    responses, transfers, variables, overrides, the observed messages) from a stream of their
    own, so that a result's scores and latencies do not depend on how its expectations are told."""
    passed = result.outcome == "PASS"
    audio = channel == "AUDIO"
    conversation = eval_conversation(catalog, result, conversations)
    if result.evaluation.kind == "GOLDEN":
        turns, clock = [], start
        for turn in range(between(rng, 1, 4)):
            failing = turn == 0
            replay, clock = _turn_replay(rng, catalog, conversation, clock, passed, failing, failing, audio)
            turns.append(replay)
        return {
            "goldenResult": {
                "turnReplayResults": turns,
                "evaluationExpectationResults": _expectation_results(rng, catalog, result, passed),
            }
        }
    extra = seeded_random(result.name, "expectations")
    tools = rng.sample(catalog.tools, k=min(2, len(catalog.tools)))
    latencies, after_tools = _latencies(rng, tools, start)
    spans, after_spans = _span_latencies(rng, catalog, start)
    task = rng.choice(catalog.user_texts)
    facts = [
        {"name": "order_id", "value": str(VALUES["order_id"](rng, catalog))},
        {"name": "customer_id", "value": str(VALUES["customer_id"](rng, catalog))},
    ]
    outcomes = [
        _scenario_expectation(rng, extra, catalog, tool, passed or index > 0)
        for index, tool in enumerate(tools)
    ]
    outcomes.append(
        _scenario_response_expectation(extra, catalog, tools, passed, audio, max(after_tools, after_spans))
    )
    return {
        "scenarioResult": {
            "conversation": conversation,
            "task": task,
            "userFacts": facts,
            "expectationOutcomes": outcomes,
            "rubricOutcomes": [
                {
                    "rubric": rubric,
                    "score": round(rng.uniform(0.7, 1.0) if passed else rng.uniform(0.1, 0.6), 3),
                    "scoreExplanation": f"{rubric}: {'met' if passed else 'partly met'} throughout.",
                }
                for rubric in rng.sample(_RUBRICS, k=2)
            ],
            "hallucinationResult": [_judgement(passed, "hallucination")],
            "taskCompletionResult": _judgement(passed, "task completion"),
            "toolCallLatencies": latencies,
            "userGoalSatisfactionResult": _judgement(passed, "user goal"),
            "allExpectationsSatisfied": passed,
            "taskCompleted": passed,
            "spanLatencies": spans,
            "evaluationExpectationResults": _expectation_results(rng, catalog, result, passed),
        }
    }


@dataclass
class _Step:
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


def _step(rng: random.Random, extra: random.Random, catalog: AppCatalog, tool: Tool, good: bool) -> _Step:
    call, args = _call(rng, catalog, tool)
    observed_args = dict(args) if good else {**args, **{name: "?" for name in list(args)[:1]}}
    correctness = 1.0 if good else round(rng.uniform(0.2, 0.7), 3)
    expected = {"output": _values(extra, catalog, tool.output)}
    mocked = tool.client or extra.random() < 0.25
    if good or mocked:
        observed = expected
    else:
        code, message = extra.choice(_TOOL_ERRORS)
        observed = {"error": {"code": code, "message": message}}
    return _Step(tool, call, args, observed_args, correctness, expected, observed, mocked)


@dataclass
class _Response:
    """The agent response a golden turn expects, what the agent said, and whether it is skipped."""

    expected: str
    said: str
    skipped: bool


def _turn_replay(
    rng: random.Random,
    catalog: AppCatalog,
    conversation: str,
    clock: int,
    passed: bool,
    failing_turn: bool,
    first: bool,
    audio: bool,
) -> tuple[dict[str, Any], int]:
    """One replayed turn of a golden result, and the clock after it; a failed result fails its
    first turn. A turn calls a tool, or none (the golden then expects no tool calls, and a tool
    the agent calls anyway is the one it would have called), may hand over to a sub-agent and
    update variables, and ends in the agent's response."""
    good = passed or not failing_turn
    extra = seeded_random(conversation, clock, "expectations")
    calls_tool = extra.random() >= 0.2
    tool = rng.choice(catalog.tools)
    latencies, after_tools = _latencies(rng, [tool], clock)
    spans, after_spans = _span_latencies(rng, catalog, clock)
    if not calls_tool:
        spans = [span for span in spans if span.get("type") != "TOOL"]
    similarity = between(rng, 3, 4) if good else between(rng, 0, 2)
    tool_score = round(rng.uniform(0.8, 1.0) if good else rng.uniform(0.0, 0.7), 3)
    step = _step(rng, extra, catalog, tool, good)
    expected_text = rng.choice(catalog.agent_texts)
    said = expected_text if good else rng.choice(catalog.agent_texts)
    response = _Response(expected_text, said, skipped=rng.random() < 0.1)
    end = max(after_tools, after_spans)
    replay: dict[str, Any] = {
        "conversation": conversation,
        "expectationOutcome": _golden_outcomes(
            extra, catalog, step, calls_tool, response, good, similarity, first, audio, end
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
    step: _Step,
    calls_tool: bool,
    response: _Response,
    good: bool,
    similarity: int,
    first: bool,
    audio: bool,
    at: int,
) -> list[dict[str, Any]]:
    """The golden turn's expectations in the order the turn unfolds, each with what was observed:
    the tool call (or none), its mocked or checked response, a transfer, variable updates, the
    agent's response, and the custom payload it sent (observed only, always SKIPPED)."""
    out: list[dict[str, Any]] = []
    verdict = "PASS" if good else "FAIL"
    if calls_tool:
        out.extend(_tool_outcomes(rng, step, good))
    else:
        item: dict[str, Any] = {"expectation": {"noToolCalls": True}}
        if not good:  # the agent called a tool the golden does not call
            item["observedToolCall"] = {**step.call, "args": step.observed_args}
        item["outcome"] = verdict
        out.append(item)
    transfer, variables = None, None
    if catalog.sub_agents and rng.random() < 0.25:
        expected_agent = rng.choice(catalog.sub_agents)
        observed_agent = expected_agent if good else rng.choice([catalog.root_agent, *catalog.sub_agents])
        item = {"expectation": {"agentTransfer": _transfer(expected_agent)}}
        if observed_agent is not catalog.root_agent:  # the root agent kept the conversation: no transfer
            item["observedAgentTransfer"] = _transfer(observed_agent)
            transfer = observed_agent
        item["outcome"] = "PASS" if observed_agent == expected_agent else "FAIL"
        out.append(item)
    if calls_tool and rng.random() < 0.4:
        expected_variables = {"last_tool": step.tool.display_name, "resolved": True}
        variables = expected_variables if good else {**expected_variables, "resolved": False}
        out.append({"expectation": {"updatedVariables": expected_variables}, "outcome": verdict})
    expectation, judged = _response_expectation(rng, response, audio)
    steps = [step] if calls_tool else []
    observed = _observed_response(rng, response.said, good, audio, at, steps, transfer, variables)
    payload = _chips(rng) if rng.random() < 0.25 else None
    spoke = _spoke(observed)
    if spoke:
        defaults = [{"defaultVariables": _default_variables()}] if first and rng.random() < 0.5 else []
        observed = _with_chunks(observed, before=defaults, after=[{"payload": payload}] if payload else [])
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


def _tool_outcomes(rng: random.Random, step: _Step, good: bool) -> list[dict[str, Any]]:
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
    expectation: dict[str, Any] = {"agentResponse": _message([_spoken(response.expected, audio)])}
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


def _spoke(message: dict[str, Any]) -> bool:
    """Whether an agent message says something (text or transcript), rather than only calling tools."""
    return any(chunk.keys() & {"text", "transcript"} for chunk in message["chunks"])


def _observed_response(
    rng: random.Random,
    said: str,
    good: bool,
    audio: bool,
    at: int,
    steps: list[_Step],
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
            chunks.append({"agentTransfer": _transfer(transfer)})
        if variables is not None:
            chunks.append({"updatedVariables": variables})
        chunks.append(_spoken(said, audio))
        if audio:
            chunks.append({"blob": {"mimeType": "audio/l16; rate=24000", "data": _audio(rng)}})
    return _message(chunks, at)


def _scenario_response_expectation(
    rng: random.Random, catalog: AppCatalog, tools: list[Tool], good: bool, audio: bool, at: int
) -> dict[str, Any]:
    """A scenario's expected agent response, as its author wrote it (what the agent says, and
    the chips, hand-over or variable update that must come with it), and the agent's message
    the judge matched it to."""
    text = rng.choice(catalog.agent_texts)
    extra = rng.choice(("payload", "transfer", "variables", None))
    expected: list[dict[str, Any]] = [_spoken(text, audio)]
    transfer = rng.choice(catalog.sub_agents) if extra == "transfer" and catalog.sub_agents else None
    variables = {"resolved": True} if extra == "variables" else None
    payload = _chips(rng) if extra == "payload" else None
    if transfer:
        expected.insert(0, {"agentTransfer": _transfer(transfer)})
    if variables:
        expected.insert(0, {"updatedVariables": variables})
    if payload:
        expected.append({"payload": payload})
    steps = [_step(rng, rng, catalog, tool, good) for tool in tools]
    said = text if good else rng.choice([other for other in catalog.agent_texts if other != text])
    observed = _observed_response(
        rng, said, good, audio, at, steps, transfer if good else None, variables if good else None
    )
    if _spoke(observed):
        # The simulation's first agent message also states the session's default variables.
        defaults = [{"defaultVariables": _default_variables()}] if rng.random() < 0.3 else []
        after = [{"payload": payload if good else _chips(rng)}] if payload else []
        observed = _with_chunks(observed, before=defaults, after=after)
    return {
        "expectation": {"agentResponse": _message(expected)},
        "observedAgentResponse": observed,
        "outcome": "PASS" if good else "FAIL",
    }


def _message(chunks: list[dict[str, Any]], at: int | None = None) -> dict[str, Any]:
    """A Message of the agent; an observed one carries its time."""
    out: dict[str, Any] = {"role": "agent", "chunks": chunks}
    if at is not None:
        out["eventTime"] = timestamp(at)
    return out


def _with_chunks(
    message: dict[str, Any], before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> dict[str, Any]:
    return {**message, "chunks": [*before, *message["chunks"], *after]}


def _spoken(text: str, audio: bool) -> dict[str, Any]:
    """What the agent says: a text chunk, or over the audio channel the transcript of its speech."""
    return {"transcript": text} if audio else {"text": text}


def _audio(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(between(rng, 64, 140))).decode("ascii")


def _transfer(agent: Agent) -> dict[str, Any]:
    return {"targetAgent": agent.name, "displayName": agent.display_name}


def _chips(rng: random.Random) -> dict[str, Any]:
    options = rng.sample(_PAYLOAD_OPTIONS, 2)
    return {"richContent": [[{"type": "chips", "options": [{"text": option} for option in options]}]]}


def _default_variables() -> dict[str, Any]:
    return {"customer_tier": "unknown", "max_refund": 500}


def _values(rng: random.Random, catalog: AppCatalog, spec: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    return {name: VALUES[kind](rng, catalog) for name, kind in spec}


def _call(rng: random.Random, catalog: AppCatalog, tool: Tool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ToolCall of `tool` without its args, and args for it."""
    args = _values(rng, catalog, tool.args)
    call = {**tool.identifier(), "id": f"call_{rng.getrandbits(64):016x}", "displayName": tool.display_name}
    return call, args


def _scenario_expectation(
    rng: random.Random, extra: random.Random, catalog: AppCatalog, tool: Tool, good: bool
) -> dict[str, Any]:
    """An expected tool call and the response the simulation mocks for it; observed: the call the
    agent made and the mocked response it got, absent when it never called the tool."""
    call, args = _call(rng, catalog, tool)
    response = {"output": _values(rng if good else extra, catalog, tool.output)}
    out: dict[str, Any] = {
        "expectation": {
            "toolExpectation": {
                "expectedToolCall": {**call, "args": args},
                "mockToolResponse": {**call, "response": response},
            }
        }
    }
    if good:
        out["observedToolCall"] = {
            "toolCall": {**call, "args": args},
            "toolResponse": {**call, "response": response},
        }
    out["outcome"] = "PASS" if good else "FAIL"
    return out


def _judgement(good: bool, what: str) -> dict[str, Any]:
    """A HallucinationResult, TaskCompletionResult or UserGoalSatisfactionResult (int32 score)."""
    score = int(good) if what != "hallucination" else int(not good)  # 1: yes
    return {
        "score": score,
        "label": f"{what}: {'yes' if score else 'no'}",
        "explanation": f"Judged from the whole conversation ({what}).",
    }


def _expectation_results(
    rng: random.Random, catalog: AppCatalog, result: ResultPlan, passed: bool
) -> list[dict[str, Any]]:
    out = []
    for index, (prompt, met, unmet) in enumerate(rng.sample(_EXPECTATION_PROMPTS, k=2)):
        good = passed or index > 0
        expectation_id = stable_hex(result.evaluation.name, prompt, length=10)
        out.append(
            {
                "evaluationExpectation": f"{catalog.app_name}/evaluationExpectations/{expectation_id}",
                "prompt": prompt,
                "outcome": "PASS" if good else "FAIL",
                "explanation": met if good else unmet,
            }
        )
    return out


def _latencies(rng: random.Random, tools: list[Tool], clock: int) -> tuple[list[dict[str, Any]], int]:
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


def _span_latencies(rng: random.Random, catalog: AppCatalog, clock: int) -> tuple[list[dict[str, Any]], int]:
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
