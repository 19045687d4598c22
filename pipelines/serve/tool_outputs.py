"""What each `ces-pipeline mcp` tool answers: the output schemas the tools publish. Where an object
is a warehouse row, its fields are that table's columns (`sql/tables/`), not repeated here."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from pipelines.warehouse.queries import jsonable

ParamValue = str | int | float | bool | None


class _Open(BaseModel):
    """An answer object whose further fields are a warehouse table's columns."""

    model_config = ConfigDict(extra="allow")


class Parameter(BaseModel):
    name: str
    type: str = Field(description="VARCHAR, DATE, TIMESTAMP, INTEGER, DOUBLE or BOOLEAN")
    choices: list[str] = Field(default_factory=list, description="the only values accepted, when given")
    default: Annotated[ParamValue, BeforeValidator(jsonable)] = None
    required: bool
    description: str


class QueryInfo(BaseModel):
    name: str
    description: str
    parameters: list[Parameter]


class QueryList(BaseModel):
    queries: list[QueryInfo]


class QueryAnswer(BaseModel):
    query: str
    params: dict[str, ParamValue] = Field(description="every parameter's value as bound, defaults included")
    columns: list[str]
    rows: list[dict[str, Any]]
    row_count: int
    truncated: bool = Field(description="true when the caps cut the rows; `note` says which")
    note: str | None = None


class Column(BaseModel):
    name: str
    type: str
    description: str | None


class Relation(BaseModel):
    name: str
    kind: str = Field(description="table or view")
    description: str | None
    row_count: int | None = Field(description="rows of a table; null for a view")
    columns: list[Column]


class WarehouseDescription(BaseModel):
    relations: list[Relation]


class Span(_Open):
    span_id: int
    name: str | None
    duration_seconds: float | None
    children: list[Span]


class Turn(_Open):
    turn_index: int
    messages: list[dict[str, Any]] = Field(
        description="each message with its chunks; a tool call, tool response or agent transfer "
        "chunk carries that row"
    )
    spans: list[Span] = Field(description="the turn's span tree (roots; children nested)")


class ConversationTrace(BaseModel):
    conversation: dict[str, Any]
    turns: list[Turn]
    next_turn: int | None = Field(description="when set, more turns follow: ask again with first_turn")
    note: str | None = None


class ReplayedConversation(BaseModel):
    conversation_name: str
    loaded: bool = Field(description="whether the warehouse holds the conversation (ingest EVAL sources)")
    slowest_spans: list[dict[str, Any]]
    erroring_tool_calls: list[dict[str, Any]]


class EvaluationExplanation(BaseModel):
    result: dict[str, Any]
    scores: list[dict[str, Any]]
    failures: list[dict[str, Any]] = Field(
        description="every failing expectation or low score, with its turn"
    )
    turn_replays: list[dict[str, Any]]
    scenario: dict[str, Any] | None
    expectation_results: list[dict[str, Any]]
    conversations: list[ReplayedConversation]


class MetricChange(BaseModel):
    metric: str
    current: float | None = Field(description="mean of its daily values over the days asked for")
    previous: float | None = Field(description="the same over the period of the same length before")
    current_days: int
    previous_days: int
    change: float | None = Field(description="current - previous")
    ratio: float | None = Field(description="current / previous")


class WhatChanged(BaseModel):
    app: str
    since: str
    until: str
    compared_with: dict[str, str] = Field(description="the period before, of the same length")
    anomalies: list[dict[str, Any]] = Field(
        description="the period's anomalous days, metric by metric (metric_anomalies), most extreme first"
    )
    metrics: list[MetricChange] = Field(
        description="volume, turn and component p90s, tool error rate, tokens, cost and evaluation pass rate"
    )
    costs: list[dict[str, Any]] = Field(
        description="LLM cost per model then and now; unpriced models have NULL cost"
    )
    evaluation_regressions: list[dict[str, Any]] = Field(
        description="what regressed in the app's latest completed evaluation run (evaluation_regressions)"
    )
