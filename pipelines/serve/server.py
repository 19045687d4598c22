"""`ces-pipeline mcp`: the warehouse as read-only MCP tools, on the official SDK's server.

No tool takes SQL: an agent picks a named query (`sql/queries/`) and gives typed parameters, which
are bound, never spliced, or asks about one conversation or evaluation result by name. Each call
opens its own read-only connection (`WarehouseReader`), so answers are as of the last finished
load, and every answer is capped in rows, bytes and seconds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from functools import partial
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from pipelines import __version__
from pipelines.errors import ActionableError
from pipelines.listening import endpoint_url, http_server, listening_socket, serve_foreground
from pipelines.serve import changes, lookups
from pipelines.serve.reader import WarehouseReader, text_table
from pipelines.serve.tool_outputs import (
    ConversationTrace,
    EvaluationExplanation,
    ParamValue,
    QueryAnswer,
    QueryList,
    Relation,
    WarehouseDescription,
    WhatChanged,
)
from pipelines.warehouse.queries import QueryParameter, asking_about, jsonable, named_queries, named_query

SERVER_NAME = "ces-pipeline-warehouse"
MCP_PATH = "/mcp"
INSTRUCTIONS = (
    "Answers about Google CES agents from the ces-pipeline warehouse: conversations, their turns, "
    "tool calls and spans, and evaluation runs and results. Start with list_queries (trend "
    "questions) or describe_warehouse (what is stored); look one conversation or evaluation "
    "result up by name. Everything is read-only and as of the last finished load."
)
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def _from_json(parameter: QueryParameter, value: ParamValue) -> Any:
    """A JSON argument as the parameter takes it: a number or boolean of its own type as is,
    anything else read from its text (so `"2026-11-01"` is a DATE and `5` a VARCHAR `"5"`)."""
    if value is None or isinstance(value, str):
        return value
    own = {"BOOLEAN": bool, "INTEGER": int, "DOUBLE": int | float}.get(parameter.type)
    if (
        own is not None
        and isinstance(value, own)
        and (parameter.type == "BOOLEAN") == isinstance(value, bool)
    ):
        return float(value) if parameter.type == "DOUBLE" else value
    return parameter.parse(str(value).lower() if isinstance(value, bool) else str(value))


def build_server(reader: WarehouseReader) -> MCPServer:
    server = MCPServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    read_only_tool = partial(server.tool, annotations=READ_ONLY)

    @read_only_tool(
        description="The named queries this warehouse answers (trends per day, tool, model, agent, "
        "evaluation), each with what it answers and its typed parameters. Run one with run_query.",
    )
    def list_queries() -> QueryList:
        return QueryList.model_validate({"queries": named_queries()}, from_attributes=True)

    @read_only_tool(
        description="Run one named query (see list_queries) with parameters, e.g. name=tool_errors, "
        'params={"app": "support-bot", "since": "2026-11-01"}. Dates are YYYY-MM-DD (UTC); an app is '
        "its id or full resource name. Rows come back as objects; the answer says when it was cut.",
    )
    def run_query(
        name: Annotated[str, Field(description="a query name from list_queries")],
        params: Annotated[
            dict[str, ParamValue] | None,
            Field(description="parameter name → value; unset ones take their default"),
        ] = None,
    ) -> Annotated[CallToolResult, QueryAnswer]:
        with _answering():
            query = named_query(name)
            declared = {p.name: p for p in query.parameters}
            given = {
                key: _from_json(declared[key], value) if key in declared else value
                for key, value in (params or {}).items()
            }
            bound = query.bind(given)
            root = reader.warehouse.scoped_parts_root
            with reader.connect() as conn, asking_about(conn, root, bound.get("app")):
                columns, cursor = query.start(conn, given)
                found = reader.collect(columns, cursor)
        answer = QueryAnswer(
            query=name,
            params={key: jsonable(value) for key, value in bound.items()},
            columns=found.columns,
            rows=found.rows,
            row_count=len(found.rows),
            truncated=found.note is not None,
            note=found.note,
        )
        return _result(
            answer, text_table(found.columns, found.rows) + (f"\n({found.note})" if found.note else "")
        )

    @read_only_tool(
        description="The warehouse's tables (with row counts) and views, what each holds and the "
        "meaning of every column: read it before choosing a query or to learn what a column means.",
    )
    def describe_warehouse() -> Annotated[CallToolResult, WarehouseDescription]:
        with _answering(), reader.connect() as conn:
            answer = WarehouseDescription.model_validate({"relations": lookups.describe_warehouse(conn)})
        return _result(answer, _relations_text(answer.relations))

    @read_only_tool(
        description="One conversation from the warehouse: its row (app, times, source, channel, agent, "
        "version), then each turn with its messages and chunks (text, tool calls with args, tool "
        "responses, agent transfers) and its span tree with durations. Long conversations come in "
        "parts: ask again with first_turn=next_turn.",
    )
    def get_conversation_trace(
        name: Annotated[str, Field(description="projects/…/apps/…/conversations/… or the conversation id")],
        first_turn: Annotated[int, Field(ge=0, description="the first turn to return")] = 0,
    ) -> Annotated[CallToolResult, ConversationTrace]:
        with _answering(), reader.connect() as conn:
            trace = lookups.conversation_trace(reader, conn, name, first_turn)
        return _result(ConversationTrace.model_validate(trace))

    @read_only_tool(
        description="Why one evaluation result passed or failed: its outcome, scores, each failing "
        "expectation or low score with its turn's latency, slowest span and erroring tool call, and "
        "for each conversation it replayed the slowest spans and every erroring tool call.",
    )
    def explain_evaluation_result(
        name: Annotated[str, Field(description="projects/…/evaluations/…/results/… or the result id")],
    ) -> Annotated[CallToolResult, EvaluationExplanation]:
        with _answering(), reader.connect() as conn:
            explanation = lookups.explain_evaluation_result(reader, conn, name)
        return _result(EvaluationExplanation.model_validate(explanation))

    @read_only_tool(
        description="What changed for one app over a range of days, against the same number of days "
        "before: its anomalous days (metrics beyond the anomaly threshold), each daily metric then and "
        "now (volume, latency p90s, tool error rate, tokens, cost, evaluation pass rate), the LLM cost "
        "per model, and what regressed in its latest evaluation run.",
    )
    def what_changed(
        app: Annotated[str, Field(description="the app's id or full resource name")],
        since: Annotated[date, Field(description="first UTC day of the range (YYYY-MM-DD)")],
        until: Annotated[date, Field(description="first UTC day after it")],
    ) -> Annotated[CallToolResult, WhatChanged]:
        with _answering(), reader.connect() as conn:
            found = changes.what_changed(conn, app, since, until, reader.warehouse.scoped_parts_root)
            answer = WhatChanged.model_validate(jsonable(found))
        if not reader.fits(answer.model_dump()):
            raise ToolError(f"the answer is over {reader.limits.max_bytes} bytes: ask for fewer days")
        return _result(answer)

    return server


def _result(answer: BaseModel, text: str | None = None) -> CallToolResult:
    """The answer as structured content, and as text for clients that read only that (compact JSON
    unless given): the same facts, never a summary that says less."""
    data = answer.model_dump(mode="json")
    if text is None:
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _relations_text(relations: list[Relation]) -> str:
    lines = []
    for relation in relations:
        size = f", {relation.row_count} rows" if relation.row_count is not None else ""
        lines.append(f"{relation.kind} {relation.name}{size}: {relation.description or ''}")
        lines.extend(f"  {c.name} {c.type}: {c.description or ''}" for c in relation.columns)
    return "\n".join(lines)


@contextmanager
def _answering() -> Iterator[None]:
    """A question that cannot be answered as asked becomes the tool error the agent reads."""
    try:
        yield
    except ActionableError as exc:
        raise ToolError(str(exc)) from None


def serve_stdio(reader: WarehouseReader) -> None:
    """Serve on stdin/stdout until the client closes them (the form an `mcpServers` entry runs)."""
    build_server(reader).run("stdio")


def serve_http(reader: WarehouseReader, host: str, port: int, announce: Callable[[str], None]) -> None:
    """Serve Streamable HTTP (stateless, as the CES server is) until interrupted; the socket is
    bound first, so port 0 resolves to the real port that is then announced."""
    app = build_server(reader).streamable_http_app(stateless_http=True, host=host)
    sock = listening_socket(host, port)
    announce(endpoint_url(sock, MCP_PATH))
    serve_foreground(http_server(app), sock)
