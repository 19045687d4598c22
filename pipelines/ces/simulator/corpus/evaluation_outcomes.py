"""What a completed EvaluationResult says about why it passed or failed: a golden result's turn
replays (an expectation of every kind: tool calls or none, mocked and checked tool responses,
transfers, variable updates, the agent's response with its comparison and metric overrides, and
the custom payloads observed; semantic similarity, hallucination, tool invocation scores,
tool-call and span latencies), a scenario result's expectations (tool calls with the responses
they mock, agent responses), rubrics and judgements, and the evaluation expectations' verdicts,
every enum value of the proto among them. Each outcome agrees with what was observed. The golden
turns' replays are made in `golden_turns`."""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipelines.ces.simulator.corpus.agent_content import chips, tool_values
from pipelines.ces.simulator.corpus.catalog import VALUES, AppCatalog, Tool
from pipelines.ces.simulator.corpus.evaluations import ResultPlan
from pipelines.ces.simulator.corpus.golden_turns import (
    agent_transfer,
    default_variables,
    message,
    observed_response,
    says_something,
    spoken,
    tool_call,
    tool_step,
    turn_replay,
    with_chunks,
)
from pipelines.ces.simulator.corpus.latencies import span_latencies, tool_call_latencies
from pipelines.ces.simulator.corpus.protojson import NANOS_PER_DAY, between, seeded_random, stable_hex
from pipelines.ces.simulator.corpus.replayed_turns import ReplayedTurn

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


REPLAYED_WITHIN = NANOS_PER_DAY
"""How long after a result began the conversation it replayed may start: a run makes the
conversations it evaluates, so none started before it."""


@dataclass(frozen=True)
class EvalConversations:
    """What the app's evaluation results replayed: its EVAL conversations, (start, name) by
    start, those its started runs made, (name, start) by the result that replayed each, and what
    each turn of one records (`replayed_turns`; none for a name not served)."""

    listed: Sequence[tuple[int, str]] = ()
    turns: Callable[[str], Sequence[ReplayedTurn]] = lambda name: ()
    made: Mapping[str, tuple[str, int]] = field(default_factory=dict)


NO_CONVERSATIONS = EvalConversations()
"""An app without EVAL conversations: each result names a missing one."""


def eval_conversation(
    catalog: AppCatalog, result: ResultPlan, start: int, conversations: Sequence[tuple[int, str]]
) -> tuple[str, int]:
    """The EVAL conversation a result that began at `start` replayed (or simulated), and when it
    started: one of the app's (`conversations`: (start, name), by start) that started within
    REPLAYED_WITHIN of `start`, picked by the result's name; when none did, a name no
    conversation has (a result naming a missing conversation, as the real service may) and `start`."""
    pick = stable_hex(result.name, "conversation", length=16)
    first = bisect.bisect_left(conversations, (start, ""))
    last = bisect.bisect_left(conversations, (start + REPLAYED_WITHIN, ""))
    if first < last:
        began, name = conversations[first + int(pick, 16) % (last - first)]
        return name, began
    return f"{catalog.app_name}/conversations/eval-{pick}", start


def outcome_detail(
    result: ResultPlan,
    rng: random.Random,
    catalog: AppCatalog,
    start: int,
    conversations: EvalConversations,
    channel: str = "TEXT",
) -> dict[str, Any]:
    """`goldenResult` or `scenarioResult` of a completed result that began at `start` (epoch
    nanoseconds), replayed in one of `conversations` (the app's EVAL ones: `eval_conversation`)
    from its start, evaluated over `channel` (TEXT or AUDIO: spoken responses are transcripts
    with their audio). A replayed turn calls the tools its conversation's turn called, and a
    scenario expects the first two its conversation called, so that what the conversation
    records and what the result observed agree.

    Scores, latencies and verdicts come from `rng`; what only the expectations say (mocks, tool
    responses, transfers, variables, overrides, the observed messages) from a stream of their
    own, so that a result's scores and latencies do not depend on how its expectations are told."""
    passed = result.outcome == "PASS"
    audio = channel == "AUDIO"
    conversation, start = conversations.made.get(result.name) or eval_conversation(
        catalog, result, start, conversations.listed
    )
    replayed = conversations.turns(conversation)
    if result.evaluation.kind == "GOLDEN":
        turns, clock = [], start
        for turn in range(between(rng, 1, 4)):
            failing = turn == 0
            recorded = replayed[turn] if turn < len(replayed) else None
            replay, clock = turn_replay(
                rng, catalog, conversation, clock, passed, failing, failing, audio, recorded
            )
            turns.append(replay)
        return {
            "goldenResult": {
                "turnReplayResults": turns,
                "evaluationExpectationResults": _expectation_results(rng, catalog, result, passed),
            }
        }
    extra = seeded_random(result.name, "expectations")
    tools = rng.sample(catalog.tools, k=min(2, len(catalog.tools)))
    if replayed:  # the tools its conversation called, the first two
        tools = list(dict.fromkeys(tool for turn in replayed for tool in turn.tools))[:2]
    latencies, after_tools = tool_call_latencies(rng, tools, start)
    spans, after_spans = span_latencies(rng, catalog, start)
    if replayed:  # what its conversation records
        latencies = [call for turn in replayed for call in turn.tool_latencies]
        spans = [span for turn in replayed for span in turn.span_latencies]
        after_tools = after_spans = replayed[-1].end
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


def _scenario_response_expectation(
    rng: random.Random, catalog: AppCatalog, tools: list[Tool], good: bool, audio: bool, at: int
) -> dict[str, Any]:
    """A scenario's expected agent response, as its author wrote it (what the agent says, and
    the chips, hand-over or variable update that must come with it), and the agent's message
    the judge matched it to."""
    text = rng.choice(catalog.agent_texts)
    extra = rng.choice(("payload", "transfer", "variables", None))
    expected: list[dict[str, Any]] = [spoken(text, audio)]
    transfer = rng.choice(catalog.sub_agents) if extra == "transfer" and catalog.sub_agents else None
    variables = {"resolved": True} if extra == "variables" else None
    payload = chips(rng) if extra == "payload" else None
    if transfer:
        expected.insert(0, {"agentTransfer": agent_transfer(transfer)})
    if variables:
        expected.insert(0, {"updatedVariables": variables})
    if payload:
        expected.append({"payload": payload})
    steps = [tool_step(rng, rng, catalog, tool, good) for tool in tools]
    said = text if good else rng.choice([other for other in catalog.agent_texts if other != text])
    observed = observed_response(
        rng, said, good, audio, at, steps, transfer if good else None, variables if good else None
    )
    if says_something(observed):
        # The simulation's first agent message also states the session's default variables.
        defaults = [{"defaultVariables": default_variables()}] if rng.random() < 0.3 else []
        after = [{"payload": payload if good else chips(rng)}] if payload else []
        observed = with_chunks(observed, before=defaults, after=after)
    return {
        "expectation": {"agentResponse": message(expected)},
        "observedAgentResponse": observed,
        "outcome": "PASS" if good else "FAIL",
    }


def _scenario_expectation(
    rng: random.Random, extra: random.Random, catalog: AppCatalog, tool: Tool, good: bool
) -> dict[str, Any]:
    """An expected tool call and the response the simulation mocks for it; observed: the call the
    agent made and the mocked response it got, absent when it never called the tool."""
    call, args = tool_call(rng, catalog, tool)
    response = {"output": tool_values(rng if good else extra, catalog, tool.output)}
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
