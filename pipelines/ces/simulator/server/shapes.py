"""The data shapes of `SimulatedFaults` (see faults.py): served objects spelled as proto3 JSON allows.

The corpus prints what Google's JSON printer prints (enum names, `Z` timestamps, standard
base64, absent fields left out). Parsers accept more, and a real server, a proxy or a later API
version may send it: enums as numbers, values this version does not know, `null` for absent,
other offsets, MIME base64, listings without traces. Each rewrite returns a new object and keeps
what the object means, except `new-enums`, whose values are new by design.
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.protojson.enums import ENUMS

CONVERSATION_ENUMS = {
    "source": "Conversation.Source",
    "channelType": "Conversation.ChannelType",
    "inputTypes": "Conversation.InputType",
}
_SHARED_EVALUATION_ENUMS = {
    "goldenRunMethod": "GoldenRunMethod",
    "config.evaluationChannel": "EvaluationConfig.EvaluationChannel",
    "config.toolCallBehaviour": "EvaluationToolCallBehaviour",
    "errorInfo.errorType": "EvaluationErrorInfo.ErrorType",
}
RUN_ENUMS = {
    "evaluationType": "EvaluationRun.EvaluationType",
    "state": "EvaluationRun.EvaluationRunState",
    "optimizationConfig.status": "OptimizationConfig.OptimizationStatus",
    **_SHARED_EVALUATION_ENUMS,
}
RESULT_ENUMS = {
    "evaluationStatus": "EvaluationResult.Outcome",
    "executionState": "EvaluationResult.ExecutionState",
    **_SHARED_EVALUATION_ENUMS,
}
"""Enum fields by dotted path (lists transparent), per served object."""

NEW_INPUT_TYPE = 12
"""An `InputType` number this version does not know."""
NEW_CHANNEL_TYPE = "VIDEO"
NEW_RUN_STATE = "VALIDATING"
"""The state a run of a later API version reports while it is neither queued nor finished."""
NEW_EXECUTION_STATE = 9
NEW_EVALUATION_TYPE = 7
_UNFINISHED = ("QUEUED", "RUNNING")
_NULL_BESIDE = {
    "conversation": ("messages", "endTime"),
    "run": ("errorInfo", "error"),
    "result": ("errorInfo",),
}
"""Optional fields written as `null` when absent, per object kind."""
_ZULU = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?Z")
_OFFSETS = (("+05:30", timedelta(hours=5, minutes=30)), ("-08:00", -timedelta(hours=8)))
_BYTES_PARENTS = ("blob", "image")


class Shaper:
    """Rewrites served conversations, runs and results in the shapes `faults` asks for."""

    def __init__(self, faults: SimulatedFaults):
        self.faults = faults

    def conversation(self, item: dict[str, Any], *, listed: bool) -> dict[str, Any]:
        name = str(item.get("name"))
        shaped = item
        if self.faults.chosen("new-enums", name):
            shaped = {**shaped}
            shaped["inputTypes"] = [*shaped.get("inputTypes", ()), NEW_INPUT_TYPE]
            if "channelType" in shaped:
                shaped["channelType"] = NEW_CHANNEL_TYPE
        if self.faults.chosen("sparse-ids", name):
            shaped = _walk_dicts(shaped, _without_tool_id)
        if listed and "turns" in shaped and self.faults.chosen("no-traces", name):
            shaped = {**shaped, "turns": [_without(turn, "rootSpan") for turn in shaped["turns"]]}
        return self._common("conversation", shaped, name, CONVERSATION_ENUMS)

    def run(self, item: dict[str, Any]) -> dict[str, Any]:
        name = str(item.get("name"))
        if self.faults.chosen("new-enums", name):
            item = {**item, "evaluationType": NEW_EVALUATION_TYPE}
            if item.get("state") in _UNFINISHED:
                item["state"] = NEW_RUN_STATE
        if "latencyReport" in item and self.faults.chosen("sparse-ids", name):
            item = {**item, "latencyReport": _sparse_latencies(item["latencyReport"])}
        return self._common("run", item, name, RUN_ENUMS)

    def operation(self, item: dict[str, Any]) -> dict[str, Any]:
        """`late-run-name`: the operation names its run only once it is done (the reference
        documents neither its metadata nor its response type), so a client must poll it."""
        if item.get("done") or not self.faults.chosen("late-run-name", str(item.get("name"))):
            return item
        return {**item, "metadata": _without(item.get("metadata") or {}, "evaluationRun")}

    def result(self, item: dict[str, Any]) -> dict[str, Any]:
        name = str(item.get("name"))
        if item.get("executionState") in _UNFINISHED and self.faults.chosen("new-enums", name):
            item = {**item, "executionState": NEW_EXECUTION_STATE}
        return self._common("result", item, name, RESULT_ENUMS)

    def _common(self, kind: str, item: dict[str, Any], name: str, enums: dict[str, str]) -> dict[str, Any]:
        if self.faults.chosen("enum-numbers", name):
            item = _walk(item, "", lambda path, value: _enum_number(enums.get(path), value))
        if self.faults.chosen("lenient-formats", name):
            item = _walk(item, "", lambda path, value: _lenient(path, value, self.faults))
        if self.faults.chosen("loose-times", name):
            item = _walk(item, "", _loose)
        if self.faults.chosen("null-fields", name):
            item = _with_nulls(item, _NULL_BESIDE[kind])
        return item


def _without(item: dict[str, Any], field: str) -> dict[str, Any]:
    return {key: value for key, value in item.items() if key != field}


def _walk(value: Any, path: str, rewrite: Any) -> Any:
    """`value` with every scalar replaced by `rewrite(path, scalar)`; paths are dotted, lists transparent."""
    if isinstance(value, dict):
        return {key: _walk(item, f"{path}.{key}" if path else key, rewrite) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, path, rewrite) for item in value]
    return rewrite(path, value)


def _walk_dicts(value: Any, rewrite: Any) -> Any:
    """`value` with every object replaced by `rewrite(object)`, innermost first."""
    if isinstance(value, dict):
        return rewrite({key: _walk_dicts(item, rewrite) for key, item in value.items()})
    if isinstance(value, list):
        return [_walk_dicts(item, rewrite) for item in value]
    return value


def _without_tool_id(item: dict[str, Any]) -> dict[str, Any]:
    tool = item.get("toolsetTool")
    return {**item, "toolsetTool": _without(tool, "toolId")} if isinstance(tool, dict) else item


def _sparse_latencies(report: dict[str, Any]) -> dict[str, Any]:
    """Toolset tools without `toolId`, and a second callback at the first one's stage."""
    out = _walk_dicts(report, _without_tool_id)
    callbacks = out.get("callbackLatencies") or []
    if callbacks:
        metrics = callbacks[0].get("latencyMetrics", {})
        second = {"stage": callbacks[0].get("stage"), "latencyMetrics": {**metrics, "callCount": 1}}
        out["callbackLatencies"] = [callbacks[0], second, *callbacks[1:]]
    return out


def _enum_number(enum: str | None, value: Any) -> Any:
    names = ENUMS.get(enum or "", ())
    return names.index(value) if value in names else value


def _lenient(path: str, value: Any, faults: SimulatedFaults) -> Any:
    """The same instant at another offset, the same bytes in another base64 alphabet or layout."""
    if not isinstance(value, str):
        return value
    parent, _, leaf = path.rpartition(".")
    if leaf == "data" and parent.rpartition(".")[2] in _BYTES_PARENTS:
        return _other_base64(value)
    match = _ZULU.fullmatch(value) if leaf.endswith("Time") else None
    if match is None:
        return value
    suffix, offset = _OFFSETS[int(faults.draw("offset", value) * len(_OFFSETS))]
    local = datetime.fromisoformat(match.group(1)).replace(tzinfo=UTC) + offset
    return f"{local:%Y-%m-%dT%H:%M:%S}{match.group(2) or ''}{suffix}"


def _loose(path: str, value: Any) -> Any:
    """The same instant as lenient parsers read it: a leap second `mm-1:60` for `mm:00`, else
    an offset without its colon (`+0530`)."""
    match = _ZULU.fullmatch(value) if isinstance(value, str) and path.endswith("Time") else None
    if match is None:
        return value
    whole, fraction = match.group(1), match.group(2) or ""
    if whole.endswith(":00") and whole[-5:-3] != "00":
        return f"{whole[:-5]}{int(whole[-5:-3]) - 1:02d}:60{fraction}Z"
    local = datetime.fromisoformat(whole).replace(tzinfo=UTC) + _OFFSETS[0][1]
    return f"{local:%Y-%m-%dT%H:%M:%S}{fraction}{_OFFSETS[0][0].replace(':', '')}"


def _other_base64(value: str) -> str:
    """Long values as MIME base64 (lines of 76), short ones URL-safe without padding."""
    if len(value) > 76:
        return "\r\n".join(value[i : i + 76] for i in range(0, len(value), 76))
    return base64.urlsafe_b64encode(base64.b64decode(value)).decode("ascii").rstrip("=")


def _with_nulls(item: dict[str, Any], optional: tuple[str, ...]) -> dict[str, Any]:
    """`null` for the absent optional fields and, in each chunk, for `text` beside another member."""
    out = _walk_dicts(item, _null_text)
    for field in optional:
        out.setdefault(field, None)
    return out


def _null_text(item: dict[str, Any]) -> dict[str, Any]:
    chunks = item.get("chunks")
    if not isinstance(chunks, list):
        return item
    nulled = [{"text": None, **c} if isinstance(c, dict) and "text" not in c else c for c in chunks]
    return {**item, "chunks": nulled}
