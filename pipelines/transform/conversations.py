"""Flatten CES `Conversation` JSON into the conversation tables, column by column.

Rows are collected as tuples per table and transposed into Arrow arrays only when a batch is
taken, so no dict is built per row and memory is bounded by the batch size the caller picks.
A conversation that violates the schema is rolled back out of every table and recorded as a
reject with its reason; the rest of the batch loads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from pipelines.transform import values as v
from pipelines.transform.rows import Reject, TableBuffers
from pipelines.transform.schemas import (
    AGENT_TRANSFERS,
    CHUNKS,
    CONVERSATION_TABLES,
    CONVERSATIONS,
    MESSAGES,
    SPANS,
    TOOL_CALLS,
    TOOL_RESPONSES,
    TURNS,
)

CONVERSATION_NAME = re.compile(r"(projects/[^/]+/locations/[^/]+/apps/[^/]+)/conversations/([^/]+)")
REJECT_SOURCE = "conversation"


class ConversationFlattener:
    """Accumulates conversations and hands out one record batch per table.

    Use `add()` per conversation and `take_batches()` every few hundred conversations; the
    flattener keeps nothing after a take, which is what bounds memory on large ingests.
    """

    def __init__(self) -> None:
        self._buffers = TableBuffers(CONVERSATION_TABLES, REJECT_SOURCE)
        self._conversations = self._buffers.rows(CONVERSATIONS)
        self._turns = self._buffers.rows(TURNS)
        self._messages = self._buffers.rows(MESSAGES)
        self._chunks = self._buffers.rows(CHUNKS)
        self._tool_calls = self._buffers.rows(TOOL_CALLS)
        self._tool_responses = self._buffers.rows(TOOL_RESPONSES)
        self._agent_transfers = self._buffers.rows(AGENT_TRANSFERS)
        self._spans = self._buffers.rows(SPANS)

    def __len__(self) -> int:
        """Conversations flattened since the last take."""
        return len(self._conversations)

    def add(self, conversation: Any) -> bool:
        """Flatten one conversation; on a schema violation roll it back, record a reject, return False."""
        return self._buffers.add(conversation, self._add)

    def take_batches(self) -> dict[str, pa.RecordBatch]:
        """One record batch per conversation table (possibly empty), then start afresh."""
        return self._buffers.take_batches()

    def take_rejects(self) -> list[Reject]:
        return self._buffers.take_rejects()

    # -- the walk ---------------------------------------------------------------------------

    def _add(self, conversation: Any) -> None:
        conversation = v.message(conversation, "conversation")
        name = v.text(conversation.get("name"), "name")
        match = CONVERSATION_NAME.fullmatch(name or "")
        if match is None:
            raise v.SchemaViolation(f"name: not a conversation resource name: {str(name)[:120]!r}")
        app, conversation_id = match.groups()
        start = v.timestamp(conversation.get("startTime"), "startTime")
        end = v.timestamp(conversation.get("endTime"), "endTime")
        input_types = [
            v.text(item, "inputTypes[]") for item in v.array(conversation.get("inputTypes"), "inputTypes")
        ]
        self._conversations.append(
            (
                name,
                app,
                conversation_id,
                start,
                end,
                (end - start) / 1e6 if start is not None and end is not None else None,
                v.int32(conversation.get("turnCount"), "turnCount"),
                v.text(conversation.get("source"), "source"),
                v.text(conversation.get("channelType"), "channelType"),
                input_types,
                v.text(conversation.get("entryAgent"), "entryAgent"),
                v.text(conversation.get("deployment"), "deployment"),
                v.text(conversation.get("appVersion"), "appVersion"),
                v.text(conversation.get("languageCode"), "languageCode"),
            )
        )
        for turn_index, turn in enumerate(v.array(conversation.get("turns"), "turns")):
            try:
                self._add_turn(name, turn_index, v.message(turn, "turn"))
            except v.SchemaViolation as exc:
                raise v.SchemaViolation(f"turns[{turn_index}].{exc}") from None
        for message_index, item in enumerate(v.array(conversation.get("messages"), "messages")):
            try:
                self._add_message(name, None, message_index, v.message(item, "message"))
            except v.SchemaViolation as exc:
                raise v.SchemaViolation(f"messages[{message_index}].{exc}") from None

    def _add_turn(self, name: str, turn_index: int, turn: dict[str, Any]) -> None:
        messages = v.array(turn.get("messages"), "messages")
        root = turn.get("rootSpan")
        span_count, root_start, root_duration = (
            self._add_spans(name, turn_index, v.message(root, "rootSpan"))
            if root is not None
            else (0, None, None)
        )
        self._turns.append(
            (
                name,
                turn_index,
                v.text(turn.get("userIntendedText"), "userIntendedText"),
                len(messages),
                span_count,
                root_start,
                root_duration,
            )
        )
        for message_index, item in enumerate(messages):
            self._add_message(name, turn_index, message_index, v.message(item, f"messages[{message_index}]"))

    def _add_message(
        self, name: str, turn_index: int | None, message_index: int, item: dict[str, Any]
    ) -> None:
        chunks = v.array(item.get("chunks"), "chunks")
        self._messages.append(
            (
                name,
                turn_index,
                message_index,
                v.text(item.get("role"), "role"),
                v.timestamp(item.get("eventTime"), "eventTime"),
                len(chunks),
            )
        )
        for chunk_index, chunk in enumerate(chunks):
            try:
                self._add_chunk((name, turn_index, message_index, chunk_index), v.message(chunk, "chunk"))
            except v.SchemaViolation as exc:
                raise v.SchemaViolation(f"chunks[{chunk_index}].{exc}") from None

    def _add_chunk(self, position: tuple[Any, ...], chunk: dict[str, Any]) -> None:
        """One chunk row, plus a tool call, tool response or agent transfer row for those kinds.

        `data` is a oneof: the first known member present decides the kind. A chunk whose only
        member is unknown (a kind added to the API later) keeps that member's name as its type
        and its value as JSON, so nothing is lost.
        """
        text = mime_type = alt_text = payload = None
        data_bytes = None
        if "text" in chunk:
            kind, text = "text", v.text(chunk["text"], "text")
        elif "transcript" in chunk:
            kind, text = "transcript", v.text(chunk["transcript"], "transcript")
        elif "blob" in chunk:
            kind = "blob"
            blob = v.message(chunk["blob"], "blob")
            mime_type = v.text(blob.get("mimeType"), "blob.mimeType")
            data_bytes = v.base64_size(blob.get("data"), "blob.data")
        elif "image" in chunk:
            kind = "image"
            image = v.message(chunk["image"], "image")
            mime_type = v.text(image.get("mimeType"), "image.mimeType")
            data_bytes = v.base64_size(image.get("data"), "image.data")
            alt_text = v.text(image.get("altText"), "image.altText")
        elif "payload" in chunk:
            kind, payload = "payload", v.struct_json(chunk["payload"], "payload")
        elif "updatedVariables" in chunk:
            kind, payload = "updated_variables", v.struct_json(chunk["updatedVariables"], "updatedVariables")
        elif "defaultVariables" in chunk:
            kind, payload = "default_variables", v.struct_json(chunk["defaultVariables"], "defaultVariables")
        elif "toolCall" in chunk:
            kind = "tool_call"
            call = v.message(chunk["toolCall"], "toolCall")
            self._tool_calls.append(
                (
                    *position,
                    *_tool_identity(call, "toolCall"),
                    v.struct_json(call.get("args"), "toolCall.args"),
                    *_tool_origin(call, "toolCall"),
                )
            )
        elif "toolResponse" in chunk:
            kind = "tool_response"
            response = v.message(chunk["toolResponse"], "toolResponse")
            body = response.get("response")
            self._tool_responses.append(
                (
                    *position,
                    *_tool_identity(response, "toolResponse"),
                    v.struct_json(body, "toolResponse.response"),
                    isinstance(body, dict) and "error" in body,
                    *_tool_origin(response, "toolResponse"),
                )
            )
        elif "agentTransfer" in chunk:
            kind = "agent_transfer"
            transfer = v.message(chunk["agentTransfer"], "agentTransfer")
            self._agent_transfers.append(
                (
                    *position,
                    v.text(transfer.get("targetAgent"), "agentTransfer.targetAgent"),
                    v.text(transfer.get("displayName"), "agentTransfer.displayName"),
                )
            )
        elif chunk:
            kind = next(iter(chunk))
            payload = v.json_text(chunk[kind], kind)
        else:
            kind = None
        self._chunks.append((*position, kind, text, mime_type, data_bytes, alt_text, payload))

    def _add_spans(
        self, name: str, turn_index: int, root: dict[str, Any]
    ) -> tuple[int, int | None, float | None]:
        """Walk a span tree iteratively in pre-order; return (span count, root start, root duration).

        Iterative on purpose: traces can be thousands of levels deep, far past Python's
        recursion limit.
        """
        stack: list[tuple[dict[str, Any], int | None, int]] = [(root, None, 0)]
        span_id = 0
        root_start: int | None = None
        root_duration: float | None = None
        while stack:
            span, parent_id, depth = stack.pop()
            start = v.timestamp(span.get("startTime"), "span.startTime")
            seconds = v.duration(span.get("duration"), "span.duration")
            if span_id == 0:
                root_start, root_duration = start, seconds
            self._spans.append(
                (
                    name,
                    turn_index,
                    span_id,
                    parent_id,
                    depth,
                    v.text(span.get("name"), "span.name"),
                    start,
                    v.timestamp(span.get("endTime"), "span.endTime"),
                    seconds,
                    v.struct_json(span.get("attributes"), "span.attributes"),
                )
            )
            children = v.array(span.get("childSpans"), "span.childSpans")
            for child in reversed(children):
                stack.append((v.message(child, "span.childSpans[]"), span_id, depth + 1))
            span_id += 1
        return span_id, root_start, root_duration


def _tool_identity(item: dict[str, Any], field: str) -> tuple[Any, ...]:
    toolset_tool = v.message(item.get("toolsetTool"), f"{field}.toolsetTool")
    return (
        v.text(item.get("id"), f"{field}.id"),
        v.text(item.get("tool"), f"{field}.tool"),
        v.text(toolset_tool.get("toolset"), f"{field}.toolsetTool.toolset"),
        v.text(toolset_tool.get("toolId"), f"{field}.toolsetTool.toolId"),
        v.text(item.get("displayName"), f"{field}.displayName"),
    )


def _tool_origin(item: dict[str, Any], field: str) -> tuple[Any, ...]:
    return (
        v.text(item.get("parentToolCallId"), f"{field}.parentToolCallId"),
        v.text(item.get("agentName"), f"{field}.agentName"),
        v.text(item.get("targetApp"), f"{field}.targetApp"),
    )


def flatten_conversations(conversations: Iterable[Any]) -> tuple[dict[str, pa.Table], list[Reject]]:
    """All conversation tables for a (small) collection of conversations, plus the rejects."""
    flattener = ConversationFlattener()
    for conversation in conversations:
        flattener.add(conversation)
    batches = flattener.take_batches()
    return {name: pa.Table.from_batches([batch]) for name, batch in batches.items()}, flattener.take_rejects()
