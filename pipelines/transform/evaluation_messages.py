"""An evaluation's agent responses, tool calls and transfers as the evaluation tables keep them:
a response in the one form Google's JSON printer writes (so every legal spelling of it loads
the same row), what it says, and the tool or agent an expectation or observation names; from
them, the columns of an expectation outcome that take more than a field."""

from __future__ import annotations

import base64
import re
from typing import Any

from pipelines.transform import values as v
from pipelines.transform.evaluations import tool_subject

SAID = ("text", "transcript")
_EXPECTED = (
    "toolCall",
    "toolResponse",
    "agentResponse",
    "agentTransfer",
    "updatedVariables",
    "mockToolResponse",
)
"""An expectation's kind: the first of these fields it sets, in snake case (a golden one's
`noToolCalls` otherwise; a scenario's `toolExpectation` is a tool call)."""
_TOOL_FIELDS = ("toolCall", "toolResponse", "mockToolResponse")
"""The fields of a golden expectation that name a tool (`expected_tool`)."""
_OBSERVED = ("ToolCall", "ToolResponse", "AgentResponse", "AgentTransfer", "Payload")
"""What an outcome observed: the first `observed…` field it sets, in snake case."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def canonical_message(message: Any, where: str) -> dict[str, Any]:
    """A Message as Google's JSON printer writes it: fields sent as null left out, bytes in
    standard base64, `eventTime` in UTC with every digit kept."""
    message = present(v.message(message, where))
    if "chunks" in message:
        chunks = []
        for index, chunk in enumerate(v.array(message["chunks"], f"{where}.chunks")):
            label = f"{where}.chunks[{index}]"
            chunk = present(v.message(chunk, label))
            for kind in ("blob", "image"):
                if kind in chunk:
                    part = present(v.message(chunk[kind], f"{label}.{kind}"))
                    if "data" in part:
                        data = v.base64_bytes(part["data"], f"{label}.{kind}.data")
                        part["data"] = base64.b64encode(data).decode("ascii")
                    chunk[kind] = part
            chunks.append(chunk)
        message["chunks"] = chunks
    if "eventTime" in message:
        message["eventTime"] = v.timestamp_text(message["eventTime"], f"{where}.eventTime")
    return message


def present(fields: dict[str, Any]) -> dict[str, Any]:
    """A message's fields without those sent as null (proto3 JSON's absent)."""
    return {key: value for key, value in fields.items() if value is not None}


def said(message: dict[str, Any] | None) -> str | None:
    """What an agent response says: its text and transcript chunks, one per line; NULL if none."""
    said = [chunk[kind] for chunk in (message or {}).get("chunks", ()) for kind in SAID if kind in chunk]
    return "\n".join(v.text(text, "chunks.text") or "" for text in said) if said else None


def observed_tool(observed: Any, where: str) -> str | None:
    """The tool of an observed tool call or response (a scenario's observed call is a pair)."""
    observed = v.message(observed, where)
    if "toolCall" in observed:
        return tool_subject(v.message(observed["toolCall"], f"{where}.toolCall"), f"{where}.toolCall.")
    return tool_subject(observed, f"{where}.")


def transfer_target(transfer: Any, response: dict[str, Any] | None, where: str) -> str | None:
    """The agent a transfer names: an AgentTransfer, or the agentTransfer chunk of a response."""
    if transfer is None:
        transfer = next(
            (c["agentTransfer"] for c in (response or {}).get("chunks", ()) if "agentTransfer" in c), None
        )
    if transfer is None:
        return None
    return v.text(v.message(transfer, f"{where}.agentTransfer").get("targetAgent"), f"{where}.targetAgent")


def outcome_columns(outcome: Any, where: str) -> dict[str, Any]:
    """The columns of a golden turn's or a scenario's expectation outcome that take more than a
    field. Their fields share names, but a scenario's expected tool call sits in `toolExpectation`
    (with the response it mocks). An agent response, expected or observed, is kept as proto3 JSON
    prints it, so that every legal form of it reads the same."""
    outcome = v.message(outcome, where[:-1])
    expectation = dict(v.message(outcome.get("expectation"), f"{where}expectation"))
    scenario_tool = v.message(expectation.get("toolExpectation"), f"{where}expectation.toolExpectation")
    if scenario_tool:
        kind, call_field, parent = "tool_call", "expectedToolCall", scenario_tool
    else:
        kind = next((_snake(field) for field in _EXPECTED if field in expectation), None)
        if kind is None and expectation.get("noToolCalls"):
            kind = "no_tool_calls"
        call_field = next((f for f in _TOOL_FIELDS if f in expectation), "toolCall")
        parent = expectation
    call = v.message(parent.get(call_field), f"{where}expectation.{call_field}")
    expected = expectation.get("agentResponse")
    if expected is not None:
        expected = expectation["agentResponse"] = canonical_message(
            expected, f"{where}expectation.agentResponse"
        )
    seen = next((f"observed{kind}" for kind in _OBSERVED if f"observed{kind}" in outcome), None)
    observed_kind = _snake(seen[8:]) if seen else None
    observed = outcome.get(seen) if seen else None
    response = None
    if observed_kind == "agent_response":
        observed = response = canonical_message(observed, f"{where}{seen}")
    return {
        "expectation_kind": kind,
        "expected_tool": tool_subject(call, f"{where}expectation.{call_field}.") if call else None,
        "expectation": v.json_text(expectation, f"{where}expectation") if expectation else None,
        "observed_kind": observed_kind,
        "observed": v.json_text(observed, f"{where}{seen}") if observed is not None else None,
        "expected_text": said(expected),
        "observed_text": said(response),
        "observed_time": v.timestamp(response.get("eventTime"), f"{where}{seen}.eventTime")
        if response
        else None,
        "observed_tool": observed_tool(observed, f"{where}{seen}")
        if observed_kind in ("tool_call", "tool_response")
        else None,
        "expected_agent": transfer_target(expectation.get("agentTransfer"), expected, f"{where}expectation"),
        "observed_agent": transfer_target(outcome.get("observedAgentTransfer"), response, f"{where}observed"),
    }
