"""How much of `EvaluationResult` the simulator fills: the leaf field paths of the published proto
(google-cloud-ces, v1beta, the version the conformance tests parse results with) that appear in
the results of a seeded history, served over HTTP.

A leaf is a field whose JSON value is one value rather than fields of the proto: a scalar, an
enum, bytes, a map, or a message of `google.protobuf` (Timestamp, Duration, Struct, Value, Any,
...: Struct and Value refer to themselves, and their content is data, not fields). A message
type already on the path would be a leaf too (none is in v1beta). A path is the JSON names from
the result down, lists transparent: `goldenResult.turnReplayResults.turnLatency`.

The bar is 80%, not 90%, because the simulator fills a path only where the real service would,
and 44 of the 290 paths are ones it would not (see NOT_SERVED): `Message` appears four times
(a golden turn's and a scenario's expected and observed agent response), each with 26 leaves,
and an expected response holds only what the agent should say. A golden expects tool calls,
tool responses, transfers and variable updates as expectations of their own kinds and custom
payloads not at all; a scenario's author writes what the agent says and what must come with it
(chips, a hand-over, a variable update) and expects tool calls as tool expectations; neither
carries recorded audio, images, default variables or a time. Agents send no images (users do).
Every path outside those is served: a path that stops being served fails the test by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from google.cloud import ces_v1beta
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from simulator_fixtures import McpHttp, parse_evaluation_result

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator

HISTORY = SimulatorScale(seed=11, apps=2, days=1, conversations_per_day=10, evaluation_runs_per_app=80)
"""Enough runs that every kind of result (golden and scenario, passed, failed, errored, over
text and audio) occurs many times, and the rarest leaves (an observed agent response's tool call
or response chunk, either way of naming its tool) at least four times each."""
RESULT = ces_v1beta.types.EvaluationResult.pb(ces_v1beta.types.EvaluationResult()).DESCRIPTOR
BAR = 0.80

_EXPECTED = r"(goldenResult\.turnReplayResults\.expectationOutcome|scenarioResult\.expectationOutcomes)"
NOT_SERVED = (
    # What an expected response never holds: the agent's tool activity, media, defaults, a time.
    re.compile(_EXPECTED + r"\.expectation\.agentResponse\.chunks\.(toolCall|toolResponse|image|blob)\..+"),
    re.compile(_EXPECTED + r"\.expectation\.agentResponse\.(chunks\.defaultVariables|eventTime)"),
    # A golden's expected response: transfers, variables and payloads are checked on their own.
    re.compile(
        r"goldenResult\.turnReplayResults\.expectationOutcome\.expectation\.agentResponse\."
        r"chunks\.(agentTransfer\..+|updatedVariables|payload)"
    ),
    # Agents send no images.
    re.compile(_EXPECTED + r"\.observedAgentResponse\.chunks\.image\..+"),
)
"""Leaf paths the real service would not fill, hence not the simulator (see the docstring)."""


def _is_leaf(field: FieldDescriptor, path: tuple[str, ...]) -> bool:
    if field.type != FieldDescriptor.TYPE_MESSAGE or field.message_type.GetOptions().map_entry:
        return True
    message = field.message_type.full_name
    return message.startswith("google.protobuf.") or message in path


def leaf_paths(message: Descriptor, prefix: str = "", path: tuple[str, ...] = ()) -> Iterator[str]:
    """Every leaf field path of `message`; `path`: the message types above it (the recursion guard)."""
    path = (*path, message.full_name)
    for field in message.fields:
        name = f"{prefix}{field.json_name}"
        if _is_leaf(field, path):
            yield name
        else:
            yield from leaf_paths(field.message_type, f"{name}.", path)


def served_paths(
    value: Any, message: Descriptor, prefix: str = "", path: tuple[str, ...] = ()
) -> Iterator[str]:
    """The leaf field paths present in `value`, the proto3 JSON of a `message`, read by its descriptor."""
    path = (*path, message.full_name)
    fields = {field.json_name: field for field in message.fields}
    for key, item in value.items():
        field = fields[key]  # a strict parse has refused unknown fields
        name = f"{prefix}{key}"
        if _is_leaf(field, path):
            yield name
            continue
        for element in item if isinstance(item, list) else [item]:
            yield from served_paths(element, field.message_type, f"{name}.", path)


@pytest.fixture(scope="module")
def results() -> list[dict[str, Any]]:
    with running_simulator(SimulatorConfig(scale=HISTORY)) as handle:
        caller = McpHttp(handle.url)
        try:
            return [
                result
                for app in handle.apps
                for result in caller.all_items(
                    "list_evaluation_results", "evaluationResults", parent=f"{app}/evaluations/-"
                )
            ]
        finally:
            caller.close()


def test_the_leaf_paths_are_the_protos() -> None:
    leaves = list(leaf_paths(RESULT))
    assert len(leaves) == len(set(leaves)) == 290
    assert {"name", "createTime", "persona.speechConfig.environment", "error.details"} <= set(leaves)
    # Struct and Value, which refer to themselves, end their paths
    assert "goldenResult.turnReplayResults.expectationOutcome.observedPayload" in leaves
    assert not any(".observedPayload." in leaf or ".args." in leaf for leaf in leaves)
    assert all(any(rule.fullmatch(leaf) for leaf in leaves) for rule in NOT_SERVED)


def test_the_simulator_fills_every_leaf_the_real_service_would(results: list[dict[str, Any]]) -> None:
    leaves = list(leaf_paths(RESULT))
    served: set[str] = set()
    for result in results:
        parse_evaluation_result(result)
        served.update(served_paths(result, RESULT))
    missing = [leaf for leaf in leaves if leaf not in served]
    unexplained = [leaf for leaf in missing if not any(rule.fullmatch(leaf) for rule in NOT_SERVED)]
    coverage = (len(leaves) - len(missing)) / len(leaves)
    assert not unexplained, f"{len(unexplained)} leaf paths never served: " + ", ".join(unexplained)
    assert coverage >= BAR, f"{coverage:.1%} of {len(leaves)} leaf paths served; missing: " + ", ".join(
        missing
    )
    print(f"{len(leaves) - len(missing)} of {len(leaves)} leaf paths served ({coverage:.1%})")
