"""What a completed EvaluationResult says about why it passed or failed: a golden result's turn
replays (expectation outcomes, semantic similarity, hallucination, tool invocation scores,
tool-call and span latencies), a scenario result's expectations, rubrics and judgements, and
the evaluation expectations' verdicts, every enum value of the proto among them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pipelines.ces.simulator.corpus.catalog import VALUES, AppCatalog, Tool
from pipelines.ces.simulator.corpus.evaluations import ResultPlan
from pipelines.ces.simulator.corpus.protojson import (
    NANOS_PER_MILLI,
    between,
    duration,
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


def eval_conversation(catalog: AppCatalog, result: ResultPlan, conversations: Sequence[str]) -> str:
    """The EVAL conversation a result replayed (or simulated): one of the app's, picked by the
    result's name; a name no conversation has when the app has none (a result naming a missing
    conversation, as the real service may)."""
    pick = stable_hex(result.name, "conversation", length=16)
    if conversations:
        return conversations[int(pick, 16) % len(conversations)]
    return f"{catalog.app_name}/conversations/eval-{pick}"


def outcome_detail(
    result: ResultPlan, rng: random.Random, catalog: AppCatalog, start: int, conversations: Sequence[str]
) -> dict[str, Any]:
    """`goldenResult` or `scenarioResult` of a completed result whose conversation began at
    `start` (epoch nanoseconds), in one of `conversations` (the app's EVAL ones)."""
    passed = result.outcome == "PASS"
    conversation = eval_conversation(catalog, result, conversations)
    if result.evaluation.kind == "GOLDEN":
        turns, clock = [], start
        for turn in range(between(rng, 1, 4)):
            replay, clock = _turn_replay(rng, catalog, conversation, clock, passed, failing_turn=turn == 0)
            turns.append(replay)
        return {
            "goldenResult": {
                "turnReplayResults": turns,
                "evaluationExpectationResults": _expectation_results(rng, catalog, result, passed),
            }
        }
    tools = rng.sample(catalog.tools, k=min(2, len(catalog.tools)))
    latencies, _ = _latencies(rng, tools, start)
    spans, _ = _span_latencies(rng, catalog, start)
    return {
        "scenarioResult": {
            "conversation": conversation,
            "task": rng.choice(catalog.user_texts),
            "userFacts": [
                {"name": "order_id", "value": str(VALUES["order_id"](rng, catalog))},
                {"name": "customer_id", "value": str(VALUES["customer_id"](rng, catalog))},
            ],
            "expectationOutcomes": [
                _scenario_expectation(rng, catalog, tool, passed or index > 0)
                for index, tool in enumerate(tools)
            ],
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


def _turn_replay(
    rng: random.Random, catalog: AppCatalog, conversation: str, clock: int, passed: bool, failing_turn: bool
) -> tuple[dict[str, Any], int]:
    """One replayed turn of a golden result, and the clock after it; a failed result fails its first turn."""
    good = passed or not failing_turn
    tool = rng.choice(catalog.tools)
    latencies, after_tools = _latencies(rng, [tool], clock)
    spans, after_spans = _span_latencies(rng, catalog, clock)
    similarity = between(rng, 3, 4) if good else between(rng, 0, 2)
    tool_score = round(rng.uniform(0.8, 1.0) if good else rng.uniform(0.0, 0.7), 3)
    replay: dict[str, Any] = {
        "conversation": conversation,
        "expectationOutcome": [
            _golden_tool_expectation(rng, catalog, tool, good),
            _golden_response_expectation(rng, catalog, good, similarity),
        ],
        "hallucinationResult": {
            "score": 0 if good else 1,
            "label": "No hallucination" if good else "Hallucination",
            "explanation": "Every claim is grounded in a tool response."
            if good
            else "The delivery date was not in any tool response.",
        },
        "toolInvocationScore": tool_score,
        "toolOrderedInvocationScore": round(tool_score * rng.uniform(0.85, 1.0), 3),
        "turnLatency": duration(max(after_tools, after_spans) - clock),
        "toolCallLatencies": latencies,
        "semanticSimilarityResult": {
            "score": similarity,
            "label": ("Very different", "Different", "Somewhat similar", "Similar", "Equivalent")[similarity],
            "explanation": "The response carries the expected facts."
            if good
            else "The response omits the order status.",
            "outcome": "PASS" if good else "FAIL",
        },
        "overallToolInvocationResult": {
            "toolInvocationScore": tool_score,
            "outcome": "PASS" if good else "FAIL",
        },
        "spanLatencies": spans,
    }
    if not good and rng.random() < 0.3:
        replay["errorInfo"] = {
            "errorType": "METRIC_CALCULATION_FAILURE",
            "errorMessage": "tool order could not be compared",
            "sessionId": f"session-{stable_hex(conversation, clock, length=12)}",
        }
    return replay, max(after_tools, after_spans) + between(rng, 200, 900) * NANOS_PER_MILLI


def _values(rng: random.Random, catalog: AppCatalog, spec: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    return {name: VALUES[kind](rng, catalog) for name, kind in spec}


def _call(rng: random.Random, catalog: AppCatalog, tool: Tool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ToolCall of `tool` without its args, and args for it."""
    args = _values(rng, catalog, tool.args)
    call = {**tool.identifier(), "id": f"call_{rng.getrandbits(64):016x}", "displayName": tool.display_name}
    return call, args


def _golden_tool_expectation(
    rng: random.Random, catalog: AppCatalog, tool: Tool, good: bool
) -> dict[str, Any]:
    call, args = _call(rng, catalog, tool)
    observed = dict(args) if good else {**args, **{name: "?" for name in list(args)[:1]}}
    return {
        "expectation": {"toolCall": {**call, "args": args}},
        "observedToolCall": {**call, "args": observed},
        "outcome": "PASS" if good else "FAIL",
        "toolInvocationResult": {
            "parameterCorrectnessScore": 1.0 if good else round(rng.uniform(0.2, 0.7), 3),
            "outcome": "PASS" if good else "FAIL",
            "explanation": "All parameters match." if good else "One parameter differs from the golden call.",
        },
    }


def _golden_response_expectation(
    rng: random.Random, catalog: AppCatalog, good: bool, similarity: int
) -> dict[str, Any]:
    expected = rng.choice(catalog.agent_texts)
    observed = expected if good else rng.choice(catalog.agent_texts)
    skipped = rng.random() < 0.1
    return {
        "expectation": {"agentResponse": {"role": "agent", "chunks": [{"text": expected}]}},
        "observedAgentResponse": {"role": "agent", "chunks": [{"text": observed}]},
        "outcome": "SKIPPED" if skipped else ("PASS" if good else "FAIL"),
        "semanticSimilarityResult": {"score": similarity, "outcome": "PASS" if good else "FAIL"},
    }


def _scenario_expectation(rng: random.Random, catalog: AppCatalog, tool: Tool, good: bool) -> dict[str, Any]:
    call, args = _call(rng, catalog, tool)
    out: dict[str, Any] = {"expectation": {"toolExpectation": {"expectedToolCall": {**call, "args": args}}}}
    if good:
        response = {"output": _values(rng, catalog, tool.output)}
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
