"""One Arrow schema per warehouse table: the single source of truth for columns and types.

The flattener builds exactly these columns, the Parquet writer writes them, the DuckDB DDL in
`sql/tables/` is checked against them, and the tests read them. A column added here without
the DDL (or the other way round) fails the schema test.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

TIMESTAMP = pa.timestamp("us", tz="UTC")
JSON = pa.string()
"""Struct-typed API fields are stored as JSON text; the warehouse column type is JSON."""


@dataclass(frozen=True)
class TableSpec:
    """A warehouse table: its Arrow schema, unique key and which string columns hold JSON.

    `schema` is what the flattener builds and the lake's Parquet holds; the warehouse table has
    those columns, then `load_columns`, which a load sets for every row of a partition.
    """

    name: str
    schema: pa.Schema
    key: tuple[str, ...]
    description: str
    json_columns: frozenset[str] = frozenset()
    load_columns: tuple[pa.Field, ...] = ()

    @property
    def warehouse_schema(self) -> pa.Schema:
        """The warehouse table's columns: the files' columns, then those the load adds."""
        return pa.schema([*self.schema, *self.load_columns])


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, dtype) for name, dtype in fields])


PARTITION_DATE = pa.field("partition_date", pa.date32())
"""The lake partition a conversation's rows were loaded from: the UTC day of its start.

Every conversation table carries it in the warehouse, so that replacing a day reads only the
row groups of that day (DuckDB skips the others by their min/max) instead of every row's name.
"""
_PARTITIONED = (PARTITION_DATE,)

_POSITION = (
    ("conversation_name", pa.string()),
    ("turn_index", pa.int32()),
    ("message_index", pa.int32()),
    ("chunk_index", pa.int32()),
)
_TOOL_IDENTITY = (
    ("tool_call_id", pa.string()),
    ("tool", pa.string()),
    ("toolset", pa.string()),
    ("toolset_tool_id", pa.string()),
    ("display_name", pa.string()),
)
_TOOL_ORIGIN = (
    ("parent_tool_call_id", pa.string()),
    ("agent_name", pa.string()),
    ("target_app", pa.string()),
)

CONVERSATIONS = TableSpec(
    name="conversations",
    schema=_schema(
        ("conversation_name", pa.string()),
        ("app", pa.string()),
        ("conversation_id", pa.string()),
        ("start_time", TIMESTAMP),
        ("end_time", TIMESTAMP),
        ("duration_seconds", pa.float64()),
        ("turn_count", pa.int32()),
        ("source", pa.string()),
        ("channel_type", pa.string()),
        ("input_types", pa.list_(pa.string())),
        ("entry_agent", pa.string()),
        ("deployment", pa.string()),
        ("app_version", pa.string()),
        ("language_code", pa.string()),
    ),
    key=("conversation_name",),
    description="One row per conversation.",
    load_columns=_PARTITIONED,
)

TURNS = TableSpec(
    name="turns",
    schema=_schema(
        ("conversation_name", pa.string()),
        ("turn_index", pa.int32()),
        ("user_intended_text", pa.string()),
        ("message_count", pa.int32()),
        ("span_count", pa.int32()),
        ("start_time", TIMESTAMP),
        ("duration_seconds", pa.float64()),
    ),
    key=("conversation_name", "turn_index"),
    description="One row per turn of a conversation.",
    load_columns=_PARTITIONED,
)

MESSAGES = TableSpec(
    name="messages",
    schema=_schema(
        ("conversation_name", pa.string()),
        ("turn_index", pa.int32()),
        ("message_index", pa.int32()),
        ("role", pa.string()),
        ("event_time", TIMESTAMP),
        ("chunk_count", pa.int32()),
    ),
    key=("conversation_name", "turn_index", "message_index"),
    description="One row per message; turn_index is NULL for the deprecated top-level messages of a "
    "conversation without turns (with turns, they repeat the turns' messages).",
    load_columns=_PARTITIONED,
)

CHUNKS = TableSpec(
    name="chunks",
    schema=_schema(
        *_POSITION,
        ("chunk_type", pa.string()),
        ("text", pa.string()),
        ("mime_type", pa.string()),
        ("data_bytes", pa.int64()),
        ("alt_text", pa.string()),
        ("payload", JSON),
    ),
    key=("conversation_name", "turn_index", "message_index", "chunk_index"),
    description="One row per message chunk.",
    json_columns=frozenset({"payload"}),
    load_columns=_PARTITIONED,
)

TOOL_CALLS = TableSpec(
    name="tool_calls",
    schema=_schema(*_POSITION, *_TOOL_IDENTITY, ("args", JSON), *_TOOL_ORIGIN),
    key=("conversation_name", "turn_index", "message_index", "chunk_index"),
    description="One row per toolCall chunk.",
    json_columns=frozenset({"args"}),
    load_columns=_PARTITIONED,
)

TOOL_RESPONSES = TableSpec(
    name="tool_responses",
    schema=_schema(*_POSITION, *_TOOL_IDENTITY, ("response", JSON), ("is_error", pa.bool_()), *_TOOL_ORIGIN),
    key=("conversation_name", "turn_index", "message_index", "chunk_index"),
    description="One row per toolResponse chunk.",
    json_columns=frozenset({"response"}),
    load_columns=_PARTITIONED,
)

AGENT_TRANSFERS = TableSpec(
    name="agent_transfers",
    schema=_schema(*_POSITION, ("target_agent", pa.string()), ("display_name", pa.string())),
    key=("conversation_name", "turn_index", "message_index", "chunk_index"),
    description="One row per agentTransfer chunk.",
    load_columns=_PARTITIONED,
)

SPANS = TableSpec(
    name="spans",
    schema=_schema(
        ("conversation_name", pa.string()),
        ("turn_index", pa.int32()),
        ("span_id", pa.int32()),
        ("parent_span_id", pa.int32()),
        ("depth", pa.int32()),
        ("name", pa.string()),
        ("start_time", TIMESTAMP),
        ("end_time", TIMESTAMP),
        ("duration_seconds", pa.float64()),
        ("attributes", JSON),
    ),
    key=("conversation_name", "turn_index", "span_id"),
    description="One row per span of a turn's trace; span_id is the pre-order position, root = 0.",
    json_columns=frozenset({"attributes"}),
    load_columns=_PARTITIONED,
)

REJECTS = TableSpec(
    name="rejects",
    schema=_schema(
        ("app", pa.string()),
        ("partition_date", pa.date32()),
        ("source", pa.string()),
        ("resource_name", pa.string()),
        ("reason", pa.string()),
        ("raw_json", JSON),
    ),
    key=("app", "partition_date", "source", "resource_name", "reason"),
    description="Objects that could not be loaded, with the reason and the object as received.",
    json_columns=frozenset({"raw_json"}),
)

CONVERSATION_TABLES: tuple[TableSpec, ...] = (
    CONVERSATIONS,
    TURNS,
    MESSAGES,
    CHUNKS,
    TOOL_CALLS,
    TOOL_RESPONSES,
    AGENT_TRANSFERS,
    SPANS,
)
"""Tables derived from conversations; every one is keyed by `conversation_name` first."""


# -- evaluation runs ---------------------------------------------------------------------------

_PROGRESS = (
    ("total_count", pa.int32()),
    ("passed_count", pa.int32()),
    ("failed_count", pa.int32()),
    ("error_count", pa.int32()),
    ("completed_count", pa.int32()),
    ("cancelled_count", pa.int32()),
)

EVALUATION_RUNS = TableSpec(
    name="evaluation_runs",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("app", pa.string()),
        ("evaluation_run_id", pa.string()),
        ("display_name", pa.string()),
        ("create_time", TIMESTAMP),
        ("initiated_by", pa.string()),
        ("app_version", pa.string()),
        ("app_version_display_name", pa.string()),
        ("changelog", pa.string()),
        ("changelog_create_time", TIMESTAMP),
        ("evaluation_dataset", pa.string()),
        ("evaluation_type", pa.string()),
        ("state", pa.string()),
        *_PROGRESS,
        ("run_count", pa.int32()),
        ("golden_run_method", pa.string()),
        ("evaluation_channel", pa.string()),
        ("tool_call_behaviour", pa.string()),
        ("error_type", pa.string()),
        ("error_message", pa.string()),
        ("latency_session_count", pa.int32()),
        ("scheduled_evaluation_run", pa.string()),
        ("operation", pa.string()),
        ("optimization_status", pa.string()),
        ("observed_at", TIMESTAMP),
    ),
    key=("evaluation_run_name",),
    description="One row per evaluation run, as last fetched (observed_at: when).",
)

EVALUATION_RUN_SUMMARIES = TableSpec(
    name="evaluation_run_summaries",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("evaluation_name", pa.string()),
        ("passed_count", pa.int32()),
        ("failed_count", pa.int32()),
        ("error_count", pa.int32()),
    ),
    key=("evaluation_run_name", "evaluation_name"),
    description="One row per entry of an evaluation run's evaluationRunSummaries.",
)

EVALUATION_RUN_LATENCIES = TableSpec(
    name="evaluation_run_latencies",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("kind", pa.string()),
        ("subject", pa.string()),
        ("display_name", pa.string()),
        ("p50_seconds", pa.float64()),
        ("p90_seconds", pa.float64()),
        ("p99_seconds", pa.float64()),
        ("call_count", pa.int32()),
        ("entry_index", pa.int32()),
    ),
    key=("evaluation_run_name", "kind", "entry_index"),
    description="One row per tool, callback, guardrail and LLM-call latency entry of a run's latency report; "
    "entry_index is the entry's position in its list (two callbacks of one stage, or two tools of a toolset "
    "named without toolId, share a subject).",
)

EVALUATION_RUN_PERSONAS = TableSpec(
    name="evaluation_run_personas",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("persona_index", pa.int32()),
        ("persona", pa.string()),
        ("task_count", pa.int32()),
    ),
    key=("evaluation_run_name", "persona_index"),
    description="One row per personaRunConfigs entry of an evaluation run.",
)

EVALUATION_RUN_EVALUATIONS = TableSpec(
    name="evaluation_run_evaluations",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("evaluation_index", pa.int32()),
        ("evaluation_name", pa.string()),
    ),
    key=("evaluation_run_name", "evaluation_index"),
    description="One row per evaluation a run covers (its `evaluations` list).",
)

EVALUATION_RUN_RESULTS = TableSpec(
    name="evaluation_run_results",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("result_index", pa.int32()),
        ("evaluation_result_name", pa.string()),
    ),
    key=("evaluation_run_name", "result_index"),
    description="One row per evaluation result name a run lists (its `evaluationResults`).",
)

EVALUATION_RUN_ERRORS = TableSpec(
    name="evaluation_run_errors",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("error_type", pa.string()),
        ("error_message", pa.string()),
        ("session_id", pa.string()),
        ("user_facing_error_message", pa.string()),
        ("status_code", pa.int32()),
        ("status_message", pa.string()),
        ("status_details", JSON),
    ),
    key=("evaluation_run_name",),
    description="One row per evaluation run with an error: its errorInfo and the deprecated error Status.",
    json_columns=frozenset({"status_details"}),
)

EVALUATION_RUN_SNAPSHOTS = TableSpec(
    name="evaluation_run_snapshots",
    schema=_schema(
        ("evaluation_run_name", pa.string()),
        ("observed_at", TIMESTAMP),
        ("state", pa.string()),
        *_PROGRESS,
    ),
    key=("evaluation_run_name", "observed_at"),
    description="One row per observed change of an evaluation run's state or progress (append-only).",
)

EVALUATION_RESULTS = TableSpec(
    name="evaluation_results",
    schema=_schema(
        ("evaluation_result_name", pa.string()),
        ("evaluation_run_name", pa.string()),
        ("evaluation_name", pa.string()),
        ("display_name", pa.string()),
        ("create_time", TIMESTAMP),
        ("evaluation_status", pa.string()),
        ("execution_state", pa.string()),
        ("result_type", pa.string()),
        ("persona", pa.string()),
        ("app_version", pa.string()),
        ("initiated_by", pa.string()),
        ("error_type", pa.string()),
        ("error_message", pa.string()),
    ),
    key=("evaluation_result_name",),
    description="One row per evaluation result of a run (status PASS/FAIL/SKIPPED, execution state).",
)

EVALUATION_RUN_TABLES: tuple[TableSpec, ...] = (
    EVALUATION_RUNS,
    EVALUATION_RUN_SUMMARIES,
    EVALUATION_RUN_LATENCIES,
    EVALUATION_RUN_PERSONAS,
    EVALUATION_RUN_EVALUATIONS,
    EVALUATION_RUN_RESULTS,
    EVALUATION_RUN_ERRORS,
)
"""Tables derived from an EvaluationRun; replaced as a whole whenever the run is seen again."""

ALL_TABLES: tuple[TableSpec, ...] = (
    *CONVERSATION_TABLES,
    REJECTS,
    *EVALUATION_RUN_TABLES,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RESULTS,
)
