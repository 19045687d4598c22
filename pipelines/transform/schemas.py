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
    """A warehouse table: its Arrow schema, unique key and which string columns hold JSON."""

    name: str
    schema: pa.Schema
    key: tuple[str, ...]
    description: str
    json_columns: frozenset[str] = frozenset()


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, dtype) for name, dtype in fields])


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
    description="One row per message; turn_index is NULL for the deprecated top-level messages.",
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
)

TOOL_CALLS = TableSpec(
    name="tool_calls",
    schema=_schema(*_POSITION, *_TOOL_IDENTITY, ("args", JSON), *_TOOL_ORIGIN),
    key=("conversation_name", "turn_index", "message_index", "chunk_index"),
    description="One row per toolCall chunk.",
    json_columns=frozenset({"args"}),
)

TOOL_RESPONSES = TableSpec(
    name="tool_responses",
    schema=_schema(*_POSITION, *_TOOL_IDENTITY, ("response", JSON), ("is_error", pa.bool_()), *_TOOL_ORIGIN),
    key=("conversation_name", "turn_index", "message_index", "chunk_index"),
    description="One row per toolResponse chunk.",
    json_columns=frozenset({"response"}),
)

AGENT_TRANSFERS = TableSpec(
    name="agent_transfers",
    schema=_schema(*_POSITION, ("target_agent", pa.string()), ("display_name", pa.string())),
    key=("conversation_name", "turn_index", "message_index", "chunk_index"),
    description="One row per agentTransfer chunk.",
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

ALL_TABLES: tuple[TableSpec, ...] = (*CONVERSATION_TABLES, REJECTS)
TABLES_BY_NAME = {spec.name: spec for spec in ALL_TABLES}
