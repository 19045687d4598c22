"""What the warehouse says about one thing, assembled from its tables: the warehouse itself (tables,
views, columns, descriptions, row counts), one conversation's trace, one evaluation result's why.

Each takes an open read-only connection and returns JSON-ready dicts whose fields are the
tables' own columns (`sql/tables/`), nested: no second definition of any table."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

from pipelines import resource_names
from pipelines.serve.reader import AnswerError, WarehouseReader
from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import (
    AGENT_TRANSFERS,
    ALL_TABLES,
    CHUNKS,
    EVALUATION_EXPECTATION_RESULTS,
    EVALUATION_SCENARIO_RESULTS,
    EVALUATION_SCORES,
    EVALUATION_TURN_REPLAYS,
    MESSAGES,
    SPANS,
    TOOL_CALLS,
    TOOL_RESPONSES,
    TURNS,
    TableSpec,
)
from pipelines.warehouse import parts
from pipelines.warehouse.parts import BOOKKEEPING
from pipelines.warehouse.queries import conversation_rows
from pipelines.warehouse.queries import json_rows as rows
from pipelines.warehouse.rollups import rollup_names

SLOWEST_SPANS = 5
"""Spans listed per replayed conversation when explaining a result: enough to see where time went."""


def one_row(found: list[dict[str, Any]], key: str, what: str, name: str) -> dict[str, Any]:
    if not found:
        raise AnswerError(f"no {what} {name!r} in the warehouse (give its full resource name or id)")
    if len(found) > 1:
        names = ", ".join(row[key] for row in found)
        raise AnswerError(f"{what} id {name!r} is ambiguous: give the full resource name ({names}, …)")
    return found[0]


# -- the warehouse -------------------------------------------------------------------------------

SHOWN_AS_TABLES = frozenset(spec.name for spec in ALL_TABLES) | frozenset(rollup_names())


def describe_warehouse(conn: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every table (with its row count) and view, its description and its columns'. A table of
    the contract or a rollup is a table wherever it is stored (a DuckDB file's conversation
    tables and rollups are views of their Parquet parts, whose bookkeeping is not shown)."""
    columns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for relation, column, kind, comment in conn.execute(sql_text("serve/relation_columns.sql")).fetchall():
        columns[relation].append({"name": column, "type": kind, "description": comment})
    count_sql = sql_text("warehouse/count_rows.sql")
    relations = []
    for name, stored_as, comment in conn.execute(sql_text("serve/relations.sql")).fetchall():
        if name in BOOKKEEPING:
            continue
        kind = "table" if name in SHOWN_AS_TABLES else stored_as
        rows = conn.execute(count_sql.format(table=name)).fetchone()[0] if kind == "table" else None
        relations.append(
            {"name": name, "kind": kind, "description": comment, "row_count": rows, "columns": columns[name]}
        )
    return sorted(relations, key=lambda relation: (relation["kind"], relation["name"]))


# -- one conversation's trace --------------------------------------------------------------------


def _span_tree(spans: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """A turn's spans nested under their parents (pre-order ids: a parent comes before its children)."""
    roots: list[dict[str, Any]] = []
    by_id: dict[int, dict[str, Any]] = {}
    for span in spans:
        node = {key: value for key, value in span.items() if key not in ("conversation_name", "turn_index")}
        node["children"] = []
        by_id[node["span_id"]] = node
        parent = by_id.get(node.get("parent_span_id"))
        (parent["children"] if parent is not None else roots).append(node)
    return roots


def _chunk_key(row: dict[str, Any]) -> tuple[int, int, int]:
    return row["turn_index"], row["message_index"], row["chunk_index"]


def conversation_turns(
    conn: duckdb.DuckDBPyConnection, conversation: dict[str, Any], parts_root: Path | None = None
) -> list[dict[str, Any]]:
    """Every turn with its messages, their chunks (a tool call, tool response or agent transfer
    with its row of that table) and the turn's span tree (`parts_root`: a DuckDB file's parts,
    of which the conversation's partition's alone are read)."""
    details = {
        "tool_call": TOOL_CALLS,
        "tool_response": TOOL_RESPONSES,
        "agent_transfer": AGENT_TRANSFERS,
    }
    name, day = conversation["conversation_name"], conversation["partition_date"]
    with parts.reading_only(conn, parts_root, [(conversation["app"], day)]):
        rows = {
            spec.name: conversation_rows(conn, spec, name, day) for spec in (TURNS, MESSAGES, CHUNKS, SPANS)
        }
        by_chunk = {
            (kind, _chunk_key(row)): row
            for kind, spec in details.items()
            for row in conversation_rows(conn, spec, name, day)
        }
    chunks: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for chunk in rows[CHUNKS.name]:
        detail = by_chunk.get((chunk["chunk_type"], _chunk_key(chunk)))
        if detail is not None:
            chunk[chunk["chunk_type"]] = _without(detail, *CHUNKS.key)
        chunks[chunk["turn_index"], chunk["message_index"]].append(_without(chunk, *CHUNKS.key[:3]))
    messages: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for message in rows[MESSAGES.name]:
        message["chunks"] = chunks[message["turn_index"], message["message_index"]]
        messages[message["turn_index"]].append(_without(message, "conversation_name", "turn_index"))
    spans: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for span in rows[SPANS.name]:
        spans[span["turn_index"]].append(span)
    return [
        {
            **_without(turn, "conversation_name"),
            "messages": messages[turn["turn_index"]],
            "spans": _span_tree(spans[turn["turn_index"]]),
        }
        for turn in rows[TURNS.name]
    ]


def _without(row: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in row.items() if key not in keys}


def find_conversation(
    conn: duckdb.DuckDBPyConnection, name: str, parts_root: Path | None = None
) -> dict[str, Any]:
    """The conversation's row, by its full resource name or its id (an AnswerError if none, or if
    the id names several). `parts_root`: a DuckDB file's parts, of which a full name's app's alone
    are read (its history, not every app's)."""
    named = resource_names.CONVERSATION.fullmatch(name)  # an id alone may be any app's
    with parts.reading_app(conn, parts_root, named.group(1) if named else None):
        found = rows(conn, sql_text("serve/find_conversation.sql"), {"name": name})
    return one_row(found, "conversation_name", "conversation", name)


def conversation_trace(
    reader: WarehouseReader, conn: duckdb.DuckDBPyConnection, name: str, first_turn: int
) -> dict[str, Any]:
    """The conversation's row and its turns from `first_turn` on, as many as the byte cap allows
    (the answer's size summed turn by turn, not serialised again for each)."""
    root = reader.warehouse.scoped_parts_root
    conversation = find_conversation(conn, name, root)
    turns = conversation_turns(conn, conversation, root)
    turns = [turn for turn in turns if turn["turn_index"] >= first_turn]
    answer: dict[str, Any] = {
        "conversation": _without(conversation, "partition_date"),
        "turns": [],
        "next_turn": None,
        "note": None,
    }
    size = len(json.dumps(answer))  # each turn adds its own JSON, and ", " after the first
    for turn in turns:
        size += len(json.dumps(turn)) + (2 if answer["turns"] else 0)
        if len(answer["turns"]) >= reader.limits.max_rows or size > reader.limits.max_bytes:
            if not answer["turns"]:
                raise AnswerError(
                    f"turn {turn['turn_index']} alone is over {reader.limits.max_bytes} bytes "
                    "(CES_SERVE_MAX_BYTES): read it with SQL, or raise the cap"
                )
            answer["next_turn"] = turn["turn_index"]
            answer["note"] = (
                f"turns {answer['turns'][0]['turn_index']}–{answer['turns'][-1]['turn_index']} only "
                f"(CES_SERVE_MAX_BYTES / CES_SERVE_MAX_ROWS): ask again with first_turn={turn['turn_index']}"
            )
            break
        answer["turns"].append(turn)
    return answer


# -- one evaluation result's why -----------------------------------------------------------------


def _result_rows(conn: duckdb.DuckDBPyConnection, spec: TableSpec, name: str) -> list[dict[str, Any]]:
    sql = sql_text("serve/evaluation_result_rows.sql").format(table=spec.name, key=", ".join(spec.key))
    return rows(conn, sql, {"name": name})


def explain_evaluation_result(
    reader: WarehouseReader, conn: duckdb.DuckDBPyConnection, name: str
) -> dict[str, Any]:
    """The result's outcome and scores, why it failed, and each replayed conversation's slowest
    spans and erroring tool calls."""
    result = one_row(
        rows(conn, sql_text("serve/find_evaluation_result.sql"), {"name": name}),
        "evaluation_result_name",
        "evaluation result",
        name,
    )
    full_name = result["evaluation_result_name"]
    turns = _result_rows(conn, EVALUATION_TURN_REPLAYS, full_name)
    scenario = _result_rows(conn, EVALUATION_SCENARIO_RESULTS, full_name)
    replayed = sorted({row["conversation_name"] for row in (*turns, *scenario) if row["conversation_name"]})
    app = full_name.split("/evaluations/", 1)[0]  # its conversations are its app's: their parts alone
    with parts.reading_app(conn, reader.warehouse.scoped_parts_root, app):
        loaded = {
            row["conversation_name"]
            for row in rows(conn, sql_text("serve/loaded_conversations.sql"), {"names": replayed})
        }
        spans = rows(
            conn, sql_text("serve/slowest_spans.sql"), {"conversations": replayed, "limit": SLOWEST_SPANS}
        )
        errors = rows(conn, sql_text("serve/erroring_tool_calls.sql"), {"conversations": replayed})
        failures = rows(conn, sql_text("serve/evaluation_result_failures.sql"), {"name": full_name})
    answer = {
        "result": result,
        "scores": _result_rows(conn, EVALUATION_SCORES, full_name),
        "failures": failures,
        "turn_replays": turns,
        "scenario": scenario[0] if scenario else None,
        "expectation_results": _result_rows(conn, EVALUATION_EXPECTATION_RESULTS, full_name),
        "conversations": [
            {
                "conversation_name": conversation,
                "loaded": conversation in loaded,
                "slowest_spans": [
                    _without(s, "conversation_name") for s in spans if s["conversation_name"] == conversation
                ],
                "erroring_tool_calls": [
                    _without(e, "conversation_name") for e in errors if e["conversation_name"] == conversation
                ],
            }
            for conversation in replayed
        ],
    }
    if not reader.fits(answer):
        raise AnswerError(
            f"the explanation of {full_name} is over {reader.limits.max_bytes} bytes (CES_SERVE_MAX_BYTES): "
            "read its rows with run_query evaluation_failures, or raise the cap"
        )
    return answer
