"""What `tools/list` advertises: each tool's description, JSON Schemas and annotations.

Input schemas mirror the request messages of the reference (lowerCamelCase JSON names); output
schemas describe the top level of the response messages loosely (nested objects stay open), which
is what MCP clients validate `structuredContent` against.
"""

from __future__ import annotations

from typing import Any

from pipelines.ces.simulator.corpus.evaluations import RUN_STATES, RUN_TYPES
from pipelines.ces.simulator.corpus.headers import SOURCES

_SOURCE_ENUM = ["SOURCE_UNSPECIFIED", *SOURCES]
_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
_STARTS_WORK = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": False,
    "openWorldHint": False,
}


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


_PAGE_SIZE = {"type": "integer", "description": "Requested page size; the server may return fewer items."}
_PAGE_TOKEN = _string("The nextPageToken of a previous call with the same parameters.")
_TIMESTAMP = {"type": "string", "description": "RFC 3339 timestamp (Timestamp format)."}

CONVERSATION = _object(
    {
        "name": _string("projects/{project}/locations/{location}/apps/{app}/conversations/{conversation}"),
        "startTime": _TIMESTAMP,
        "endTime": _TIMESTAMP,
        "turns": {"type": "array", "items": {"type": "object"}},
        "turnCount": {"type": "integer"},
        "channelType": {"type": "string"},
        "source": {"type": "string", "enum": _SOURCE_ENUM},
        "inputTypes": {"type": "array", "items": {"type": "string"}},
        "entryAgent": {"type": "string"},
        "deployment": {"type": "string"},
        "appVersion": {"type": "string"},
        "languageCode": {"type": "string"},
        "messages": {"type": "array", "items": {"type": "object"}},
    },
    ("name",),
)
EVALUATION_RUN = _object(
    {
        "name": _string("projects/{project}/locations/{location}/apps/{app}/evaluationRuns/{evaluationRun}"),
        "displayName": {"type": "string"},
        "evaluationResults": {"type": "array", "items": {"type": "string"}},
        "createTime": _TIMESTAMP,
        "evaluationType": {"type": "string", "enum": ["EVALUATION_TYPE_UNSPECIFIED", *RUN_TYPES]},
        "state": {"type": "string", "enum": ["EVALUATION_RUN_STATE_UNSPECIFIED", *RUN_STATES]},
        "progress": {"type": "object"},
        "evaluationRunSummaries": {"type": "object"},
        "latencyReport": {"type": "object"},
        "runCount": {"type": "integer"},
    },
    ("name",),
)
OPERATION = _object(
    {
        "name": _string("projects/{project}/locations/{location}/operations/{operation}"),
        "metadata": {"type": "object"},
        "done": {"type": "boolean"},
        "error": {"type": "object"},
        "response": {"type": "object"},
    },
    ("name",),
)
EVALUATION_RESULT = _object(
    {
        "name": _string(
            "projects/{project}/locations/{location}/apps/{app}/evaluations/{evaluation}/results/{result}"
        ),
        "evaluationRun": {"type": "string"},
        "evaluationStatus": {"type": "string"},
        "executionState": {"type": "string"},
    },
    ("name",),
)


def _listing(field: str, item: dict[str, Any]) -> dict[str, Any]:
    return _object({field: {"type": "array", "items": item}, "nextPageToken": {"type": "string"}})


TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    {
        "name": "list_conversations",
        "description": "Lists conversations.",
        "inputSchema": _object(
            {
                "parent": _string("The resource name of the app from which to list conversations."),
                "pageSize": _PAGE_SIZE,
                "pageToken": _PAGE_TOKEN,
                "filter": _string('AIP-160 filter, e.g. start_time >= "2026-11-01T00:00:00Z".'),
                "source": {"type": "string", "enum": _SOURCE_ENUM, "description": "Deprecated: use sources."},
                "sources": {
                    "type": "array",
                    "items": {"type": "string", "enum": _SOURCE_ENUM},
                    "description": "Sources to list; all when unset.",
                },
            },
            ("parent",),
        ),
        "outputSchema": _listing("conversations", CONVERSATION),
        "annotations": {"title": "List conversations", **_READ_ONLY},
    },
    {
        "name": "get_conversation",
        "description": "Gets details of the specified conversation.",
        "inputSchema": _object({"name": _string("The resource name of the conversation.")}, ("name",)),
        "outputSchema": CONVERSATION,
        "annotations": {"title": "Get conversation", **_READ_ONLY},
    },
    {
        "name": "list_evaluation_runs",
        "description": "Lists all evaluation runs in the given app.",
        "inputSchema": _object(
            {
                "parent": _string("The resource name of the app."),
                "pageSize": _PAGE_SIZE,
                "pageToken": _PAGE_TOKEN,
                "filter": _string('Equality on state or evaluation_type, e.g. state = "COMPLETED".'),
                "orderBy": _string('"name", "create_time" or "update_time" (default), optionally " desc".'),
            },
            ("parent",),
        ),
        "outputSchema": _listing("evaluationRuns", EVALUATION_RUN),
        "annotations": {"title": "List evaluation runs", **_READ_ONLY},
    },
    {
        "name": "get_evaluation_run",
        "description": "Gets details of the specified evaluation run.",
        "inputSchema": _object(
            {"name": _string("The resource name of the evaluation run to retrieve.")}, ("name",)
        ),
        "outputSchema": EVALUATION_RUN,
        "annotations": {"title": "Get evaluation run", **_READ_ONLY},
    },
    {
        "name": "run_evaluation",
        "description": "Runs an evaluation for a CES app.",
        "inputSchema": _object(
            {
                "app": _string("The resource name of the app for which to run the evaluation."),
                "evaluations": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "IDs (or resource names) of the evaluations to run.",
                },
                "evaluationDataset": _string("The ID (or resource name) of the evaluation dataset to use."),
                "displayName": _string("The display name of the evaluation run."),
                "appVersion": _string("The app version to use for running the evaluation."),
            },
            ("app",),
        ),
        "outputSchema": OPERATION,
        "annotations": {"title": "Run evaluation", **_STARTS_WORK},
    },
    {
        "name": "get_operation",
        "description": "Gets the latest state of a long-running operation (e.g. from run_evaluation).",
        "inputSchema": _object({"name": _string("The name of the operation resource.")}, ("name",)),
        "outputSchema": OPERATION,
        "annotations": {"title": "Get operation", **_READ_ONLY},
    },
    {
        "name": "list_evaluation_results",
        "description": "Lists evaluation results of an evaluation; use evaluations/- for all evaluations.",
        "inputSchema": _object(
            {
                "parent": _string(
                    "projects/{project}/locations/{location}/apps/{app}/evaluations/{evaluation}"
                    " or .../evaluations/- for all evaluations of the app."
                ),
                "pageSize": _PAGE_SIZE,
                "pageToken": _PAGE_TOKEN,
                "filter": _string(
                    'Equality on evaluation_run, e.g. evaluation_run = "projects/.../evaluationRuns/r1".'
                ),
            },
            ("parent",),
        ),
        "outputSchema": _listing("evaluationResults", EVALUATION_RESULT),
        "annotations": {"title": "List evaluation results", **_READ_ONLY},
    },
)
