"""One Arrow schema per warehouse table, from its DDL in `sql/tables/`: flattener, lake and check share it."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

from pipelines.sqlfiles import sql_text

TIMESTAMP = pa.timestamp("us", tz="UTC")
JSON = pa.string()
"""Struct-typed API fields are stored as JSON text; the warehouse column type is JSON."""

PARTITION_DATE = pa.field("partition_date", pa.date32())
"""The lake partition (the UTC day of its start) a conversation's rows were loaded from: with it,
replacing a day reads only that day's row groups, not every row's name."""

_COLUMN = re.compile(r"^\s+([a-z_0-9]+) ([A-Z]+)(\[\])?,?$", re.MULTILINE)
_ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "DATE": pa.date32(),
    "TIMESTAMPTZ": TIMESTAMP,
    "JSON": JSON,
}


@dataclass(frozen=True)
class TableSpec:
    """A warehouse table: its Arrow schema (built by the flattener, kept in the lake), unique key and
    JSON columns; the warehouse table adds `load_columns`, set by a load for a partition's rows."""

    name: str
    schema: pa.Schema
    key: tuple[str, ...]
    json_columns: frozenset[str] = frozenset()
    load_columns: tuple[pa.Field, ...] = ()

    @property
    def warehouse_schema(self) -> pa.Schema:
        return pa.schema([*self.schema, *self.load_columns])


def _table(name: str, *key: str, partitioned: bool = False) -> TableSpec:
    """The table `sql/tables/<name>.sql` creates; `partitioned`: its last column is `partition_date`."""
    columns = _COLUMN.findall(sql_text(f"tables/{name}.sql"))
    fields = [
        pa.field(column, pa.list_(_ARROW_TYPES[kind]) if array else _ARROW_TYPES[kind])
        for column, kind, array in columns
    ]
    load_columns = (PARTITION_DATE,) if partitioned else ()
    if partitioned and fields[-1] != PARTITION_DATE:
        raise ValueError(f"sql/tables/{name}.sql: the last column must be partition_date DATE")
    return TableSpec(
        name,
        pa.schema(fields[: len(fields) - len(load_columns)]),
        key,
        frozenset(column for column, kind, _ in columns if kind == "JSON"),
        load_columns,
    )


_CHUNK_KEY = ("conversation_name", "turn_index", "message_index", "chunk_index")

CONVERSATIONS = _table("conversations", "conversation_name", partitioned=True)
TURNS = _table("turns", "conversation_name", "turn_index", partitioned=True)
MESSAGES = _table("messages", "conversation_name", "turn_index", "message_index", partitioned=True)
CHUNKS = _table("chunks", *_CHUNK_KEY, partitioned=True)
TOOL_CALLS = _table("tool_calls", *_CHUNK_KEY, partitioned=True)
TOOL_RESPONSES = _table("tool_responses", *_CHUNK_KEY, partitioned=True)
AGENT_TRANSFERS = _table("agent_transfers", *_CHUNK_KEY, partitioned=True)
SPANS = _table("spans", "conversation_name", "turn_index", "span_id", partitioned=True)
REJECTS = _table("rejects", "app", "partition_date", "source", "resource_name", "reason")
LOADED_PARTITIONS = _table("loaded_partitions", "app", "partition_date")
RUN_REJECT_SOURCE = "evaluation_run"
OPERATION_REJECT_SOURCE = "evaluation_operation"
RESULT_REJECT_SOURCE = "evaluation_result"
"""`rejects.source` of what an evaluation load rejects (a conversation load's: `conversation`)."""
REFUSED_RUN = "get_evaluation_run refused: "
"""How the reject reason of a run CES says does not exist starts (deleted: no longer followed)."""

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

EVALUATION_RUNS = _table("evaluation_runs", "evaluation_run_name")
EVALUATION_RUN_SUMMARIES = _table("evaluation_run_summaries", "evaluation_run_name", "evaluation_name")
EVALUATION_RUN_LATENCIES = _table("evaluation_run_latencies", "evaluation_run_name", "kind", "entry_index")
EVALUATION_RUN_PERSONAS = _table("evaluation_run_personas", "evaluation_run_name", "persona_index")
EVALUATION_RUN_EVALUATIONS = _table("evaluation_run_evaluations", "evaluation_run_name", "evaluation_index")
EVALUATION_RUN_RESULTS = _table("evaluation_run_results", "evaluation_run_name", "result_index")
EVALUATION_RUN_ERRORS = _table("evaluation_run_errors", "evaluation_run_name")
EVALUATION_RUN_SNAPSHOTS = _table("evaluation_run_snapshots", "evaluation_run_name", "observed_at")
EVALUATION_RUN_OPERATIONS = _table("evaluation_run_operations", "evaluation_run_name")
EVALUATION_RESULTS = _table("evaluation_results", "evaluation_result_name")
EVALUATION_TURN_REPLAYS = _table("evaluation_turn_replays", "evaluation_result_name", "turn_index")
EVALUATION_SCENARIO_RESULTS = _table("evaluation_scenario_results", "evaluation_result_name")
EVALUATION_SCORES = _table("evaluation_scores", "evaluation_result_name", "score_index")
EVALUATION_EXPECTATION_OUTCOMES = _table(
    "evaluation_expectation_outcomes", "evaluation_result_name", "outcome_index"
)
EVALUATION_EXPECTATION_RESULTS = _table(
    "evaluation_expectation_results", "evaluation_result_name", "expectation_index"
)
EVALUATION_RESULT_LATENCIES = _table("evaluation_result_latencies", "evaluation_result_name", "latency_index")
EVALUATION_RESULT_TABLES: tuple[TableSpec, ...] = (
    EVALUATION_RESULTS,
    EVALUATION_TURN_REPLAYS,
    EVALUATION_SCENARIO_RESULTS,
    EVALUATION_SCORES,
    EVALUATION_EXPECTATION_OUTCOMES,
    EVALUATION_EXPECTATION_RESULTS,
    EVALUATION_RESULT_LATENCIES,
)
"""A result and its details: replaced together, per evaluation run, whenever the run is fetched."""

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
    LOADED_PARTITIONS,
    *EVALUATION_RUN_TABLES,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_OPERATIONS,
    *EVALUATION_RESULT_TABLES,
)
