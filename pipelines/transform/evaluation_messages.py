"""An evaluation's agent responses, tool calls and transfers as the evaluation tables keep them:
a response in the one form Google's JSON printer writes (so every legal spelling of it loads
the same row), what it says, and the tool or agent an expectation or observation names."""

from __future__ import annotations

import base64
from typing import Any

from pipelines.transform import values as v
from pipelines.transform.evaluations import tool_subject

SAID = ("text", "transcript")


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
