"""CES `Conversation` JSON → the conversation tables: a walk appends each typed value to its
column's list, and times and JSON are checked a column at a time in Arrow when a batch is taken; a
conversation with a bad value is a reject (reason and path), out of every table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pyarrow as pa
from msgspec import Raw

from pipelines import resource_names
from pipelines.protojson.enums import enum_name
from pipelines.transform import values as v
from pipelines.transform.columns import (
    DURATION_COLUMNS,
    POSITIONS,
    TIMESTAMP_COLUMNS,
    TableColumns,
    check_column,
    positioned,
    seconds_between,
)
from pipelines.transform.conversation_json import (
    ABSENT,
    AgentTransfer,
    Blob,
    Chunk,
    Conversation,
    Image,
    LakeConversation,
    Message,
    Span,
    ToolCall,
    ToolResponse,
    ToolsetTool,
    has_error_member,
)
from pipelines.transform.rejects import Reject
from pipelines.transform.schemas import (
    CHUNKS,
    CONVERSATION_TABLES,
    CONVERSATIONS,
    MESSAGES,
    SPANS,
    TURNS,
)

REJECT_SOURCE = "conversation"

# What an absent (null) toolset reference reads as.
_NO_TOOLSET = ToolsetTool()

_FIELD_NAMES = {
    ("conversations", "start_time"): "startTime",
    ("conversations", "end_time"): "endTime",
    ("turns", "start_time"): "rootSpan.startTime",
    ("turns", "duration_seconds"): "rootSpan.duration",
    ("messages", "event_time"): "eventTime",
    ("spans", "start_time"): "span.startTime",
    ("spans", "end_time"): "span.endTime",
    ("spans", "duration_seconds"): "span.duration",
    ("spans", "attributes"): "span.attributes",
    ("chunks", "payload"): "payload",
    ("tool_calls", "args"): "toolCall.args",
    ("tool_responses", "response"): "toolResponse.response",
}
"""Where a column's value came from in the conversation's JSON, for reject reasons."""


class _Invalid(ValueError):
    """A value the walk or a column conversion refuses; the message says where and why."""


class ConversationFlattener:
    """A batch per table each `take_batches()` (keeping nothing); `take_rejects()`: every reject, in order."""

    def __init__(self) -> None:
        self._tables = {spec.name: TableColumns(spec) for spec in CONVERSATION_TABLES}
        self._conversations: list[LakeConversation] = []
        self._ordinals: list[int] = []
        self._names: list[str] = []
        self._added = 0
        self._rejects: list[tuple[int, Reject]] = []
        self._current: LakeConversation | None = None
        self._walk = self._build_walk()

    def __len__(self) -> int:
        """Conversations added since the last take and not rejected at once."""
        return len(self._conversations)

    def add(self, conversation: Any) -> bool:
        """Flatten a `LakeConversation` or parsed JSON; False when it is rejected."""
        ordinal = self._added
        self._added += 1
        if not isinstance(conversation, LakeConversation):
            conversation = LakeConversation.of(conversation)
        typed = conversation.typed
        if typed is None:
            self._reject(ordinal, conversation, conversation.error or "not a conversation")
            return False
        marks = [table.rows for table in self._tables.values()]
        self._current = conversation
        try:
            name = self._walk(typed)
        except (_Invalid, v.SchemaViolation) as exc:
            for table, rows in zip(self._tables.values(), marks, strict=True):
                table.truncate(rows)
            self._reject(ordinal, conversation, str(exc))
            return False
        finally:
            self._current = None
        for table in self._tables.values():
            table.offsets.append(table.rows)
        self._conversations.append(conversation)
        self._ordinals.append(ordinal)
        self._names.append(name)
        return True

    def take_batches(self) -> dict[str, pa.RecordBatch]:
        while True:
            failures, checked = self._check()
            if not failures:
                break
            for index, reason in failures.items():
                self._reject(self._ordinals[index], self._conversations[index], reason)
            kept = [i for i in range(len(self._conversations)) if i not in failures]
            for table in self._tables.values():
                table.keep(kept)
            self._conversations = [self._conversations[i] for i in kept]
            self._ordinals = [self._ordinals[i] for i in kept]
            self._names = [self._names[i] for i in kept]
        batches = self._convert(checked)
        for table in self._tables.values():
            table.clear()
        self._conversations, self._ordinals, self._names = [], [], []
        return batches

    def take_rejects(self) -> list[Reject]:
        """Every reject since the last take, in the order the conversations were added."""
        rejects, self._rejects = sorted(self._rejects, key=lambda item: item[0]), []
        return [reject for _, reject in rejects]

    def _reject(self, ordinal: int, conversation: LakeConversation, reason: str) -> None:
        self._rejects.append((ordinal, Reject.of(REJECT_SOURCE, conversation.value(), reason)))

    # -- checking and converting a batch -------------------------------------------------------

    def _check(self) -> tuple[dict[int, str], dict[tuple[str, str], pa.Array]]:
        """Each conversation's first failing value's reason (by batch index), and the checked columns."""
        failures: dict[int, str] = {}
        checked: dict[tuple[str, str], pa.Array] = {}
        for spec in CONVERSATION_TABLES:
            table = self._tables[spec.name]
            for column in (
                *TIMESTAMP_COLUMNS.get(spec.name, ()),
                *DURATION_COLUMNS.get(spec.name, ()),
                *sorted(spec.json_columns),
            ):
                bad, converted = check_column(spec, column, table.lists)
                if not bad:
                    checked[spec.name, column] = converted
                    continue
                rows = np.fromiter(bad, dtype=np.int64, count=len(bad))
                for row, owner in zip(rows.tolist(), table.owners(rows).tolist(), strict=True):
                    if owner not in failures:
                        where = self._where(spec.name, row)
                        failures[owner] = f"{where}{_FIELD_NAMES[spec.name, column]}: {bad[row]}"
        return failures, checked

    def _where(self, table: str, row: int) -> str:
        """The JSON path prefix of a row of `table` within its conversation."""
        lists = self._tables[table].lists
        if table in (TURNS.name, SPANS.name):
            turn = lists["turn_index"][row] if table == TURNS.name else self._span_turn(row)
            return f"turns[{turn}]."
        if table == CONVERSATIONS.name:
            return ""
        if table == CHUNKS.name:
            turn, message, chunk = self._chunk_position(row)
        else:
            turn, message = lists["turn_index"][row], lists["message_index"][row]
            chunk = lists["chunk_index"][row] if "chunk_index" in lists else None
        prefix = "" if turn is None else f"turns[{turn}]."
        return f"{prefix}messages[{message}]." + ("" if chunk is None else f"chunks[{chunk}].")

    def _span_turn(self, row: int) -> int:
        turns = self._tables[TURNS.name].lists
        ends = np.cumsum(turns["span_count"])
        return turns["turn_index"][int(np.searchsorted(ends, row, side="right"))]

    def _chunk_position(self, row: int) -> tuple[int | None, int, int]:
        messages = self._tables[MESSAGES.name].lists
        ends = np.cumsum(messages["chunk_count"])
        owner = int(np.searchsorted(ends, row, side="right"))
        first = int(ends[owner - 1]) if owner else 0
        return messages["turn_index"][owner], messages["message_index"][owner], row - first

    def _convert(self, checked: dict[tuple[str, str], pa.Array]) -> dict[str, pa.RecordBatch]:
        names = pa.array(self._names, type=pa.string())
        batches: dict[str, pa.RecordBatch] = {}
        for spec in CONVERSATION_TABLES:
            table = self._tables[spec.name]
            counts = np.diff(np.asarray(table.offsets, dtype=np.int64))
            arrays: dict[str, pa.Array] = {}
            if spec.name in POSITIONS:
                positions = POSITIONS[spec.name]
                arrays.update(positioned(batches[positions.owner], positions, table.rows))
            for field in spec.schema:
                if field.name == "conversation_name":
                    arrays[field.name] = (
                        names
                        if spec is CONVERSATIONS
                        else names.take(np.repeat(np.arange(len(counts)), counts))
                    )
                elif (spec.name, field.name) in checked:
                    arrays[field.name] = checked[spec.name, field.name]
                elif field.name in table.lists:
                    arrays[field.name] = pa.array(table.lists[field.name], type=field.type)
            if spec is CONVERSATIONS:
                lists = table.lists
                arrays["duration_seconds"] = seconds_between(lists["start_time"], lists["end_time"])
            batches[spec.name] = pa.RecordBatch.from_arrays(
                [arrays[field.name] for field in spec.schema], schema=spec.schema
            )
        return batches

    # -- the walk -------------------------------------------------------------------------------

    def _unknown_chunk(self, turn_index: int | None, message_index: int, chunk_index: int) -> tuple[Any, Any]:
        """An unknown chunk kind (a later API's): its first non-null member, as JSON, or (None, absent)."""
        assert self._current is not None
        value = self._current.value()
        holder = value if turn_index is None else value["turns"][turn_index]
        chunk = holder["messages"][message_index]["chunks"][chunk_index]
        sent = [kind for kind, value in chunk.items() if value is not None] if isinstance(chunk, dict) else []
        if not sent:
            return None, ABSENT
        return sent[0], Raw(v.json_text(chunk[sent[0]], sent[0]).encode())

    def _build_walk(self) -> Callable[[Conversation], str]:
        """The per-conversation walk as a closure over every column's `append` (the hot loop)."""
        t = {name: table.lists for name, table in self._tables.items()}
        conversations, turns, messages, chunks = t["conversations"], t["turns"], t["messages"], t["chunks"]
        tool_calls, tool_responses, transfers, spans = (
            t["tool_calls"],
            t["tool_responses"],
            t["agent_transfers"],
            t["spans"],
        )
        c_app, c_id = conversations["app"].append, conversations["conversation_id"].append
        c_start, c_end = conversations["start_time"].append, conversations["end_time"].append
        c_turn_count, c_source = conversations["turn_count"].append, conversations["source"].append
        c_channel, c_inputs = conversations["channel_type"].append, conversations["input_types"].append
        c_entry, c_deployment = conversations["entry_agent"].append, conversations["deployment"].append
        c_version, c_language = conversations["app_version"].append, conversations["language_code"].append
        t_index, t_text = turns["turn_index"].append, turns["user_intended_text"].append
        t_messages, t_spans = turns["message_count"].append, turns["span_count"].append
        t_start, t_duration = turns["start_time"].append, turns["duration_seconds"].append
        m_turn, m_index, m_role = (
            messages["turn_index"].append,
            messages["message_index"].append,
            messages["role"].append,
        )
        m_time, m_chunks = messages["event_time"].append, messages["chunk_count"].append
        k_type, k_text, k_mime = (
            chunks["chunk_type"].append,
            chunks["text"].append,
            chunks["mime_type"].append,
        )
        k_bytes, k_alt, k_payload = (
            chunks["data_bytes"].append,
            chunks["alt_text"].append,
            chunks["payload"].append,
        )
        call_columns = [values.append for values in tool_calls.values()]
        response_columns = [values.append for values in tool_responses.values()]
        transfer_columns = [values.append for values in transfers.values()]
        s_parent, s_depth = spans["parent_span_id"].append, spans["depth"].append
        s_name, s_start, s_end = spans["name"].append, spans["start_time"].append, spans["end_time"].append
        s_duration, s_attributes = spans["duration_seconds"].append, spans["attributes"].append
        name_match = resource_names.CONVERSATION.fullmatch
        int32 = v.int32
        base64_size = v.base64_size
        unknown_chunk = self._unknown_chunk

        def sent(member: Raw) -> bool:
            return bool(member) and bytes(member) != b"null"

        absent = ABSENT

        def row(columns: list[Callable[[Any], None]], *parts: tuple[Any, ...]) -> None:
            for append, value in zip(columns, [value for part in parts for value in part], strict=True):
                append(value)

        def add_chunks(turn_index: int | None, message_index: int, items: list[Chunk]) -> None:
            where = ("" if turn_index is None else f"turns[{turn_index}].") + f"messages[{message_index}]."
            for chunk_index, chunk in enumerate(items):
                text = mime_type = alt_text = data_bytes = None
                payload = absent
                # A member sent as null is absent (proto3 JSON): the type says which one was sent.
                if type(chunk.text) is str:
                    kind, text = "text", chunk.text
                elif type(chunk.transcript) is str:
                    kind, text = "transcript", chunk.transcript
                elif type(chunk.blob) is Blob:
                    kind = "blob"
                    blob = chunk.blob
                    mime_type = blob.mime_type
                    data_bytes = base64_size(blob.data, f"{where}chunks[{chunk_index}].blob.data")
                elif type(chunk.image) is Image:
                    kind = "image"
                    image = chunk.image
                    mime_type = image.mime_type
                    data_bytes = base64_size(image.data, f"{where}chunks[{chunk_index}].image.data")
                    alt_text = image.alt_text
                elif sent(chunk.payload):
                    kind, payload = "payload", chunk.payload
                elif sent(chunk.updated_variables):
                    kind, payload = "updated_variables", chunk.updated_variables
                elif sent(chunk.default_variables):
                    kind, payload = "default_variables", chunk.default_variables
                elif type(chunk.tool_call) is ToolCall:
                    kind = "tool_call"
                    call = chunk.tool_call
                    toolset = call.toolset_tool or _NO_TOOLSET
                    row(
                        call_columns,
                        (turn_index, message_index, chunk_index, call.id, call.tool, toolset.toolset),
                        (toolset.tool_id, call.display_name, call.args),
                        (call.parent_tool_call_id, call.agent_name, call.target_app),
                    )
                elif type(chunk.tool_response) is ToolResponse:
                    kind = "tool_response"
                    response = chunk.tool_response
                    toolset = response.toolset_tool or _NO_TOOLSET
                    body = response.response
                    row(
                        response_columns,
                        (turn_index, message_index, chunk_index, response.id, response.tool, toolset.toolset),
                        (toolset.tool_id, response.display_name, body, bool(body) and has_error_member(body)),
                        (response.parent_tool_call_id, response.agent_name, response.target_app),
                    )
                elif type(chunk.agent_transfer) is AgentTransfer:
                    kind = "agent_transfer"
                    transfer = chunk.agent_transfer
                    row(
                        transfer_columns,
                        (turn_index, message_index, chunk_index),
                        (transfer.target_agent, transfer.display_name),
                    )
                else:
                    kind, payload = unknown_chunk(turn_index, message_index, chunk_index)
                k_type(kind)
                k_text(text)
                k_mime(mime_type)
                k_bytes(data_bytes)
                k_alt(alt_text)
                k_payload(payload)

        def add_messages(turn_index: int | None, items: list[Message]) -> None:
            for message_index, item in enumerate(items):
                chunk_items = item.chunks or ()
                m_turn(turn_index)
                m_index(message_index)
                m_role(item.role)
                m_time(item.event_time)
                m_chunks(len(chunk_items))
                add_chunks(turn_index, message_index, chunk_items)

        def add_spans(root: Span) -> int:
            """Pre-order, with an explicit stack: traces can be thousands of levels deep."""
            stack: list[tuple[Span, int | None, int]] = [(root, None, 0)]
            push, pop = stack.append, stack.pop
            span_id = 0
            while stack:
                span, parent_id, depth = pop()
                s_parent(parent_id)
                s_depth(depth)
                s_name(span.name)
                s_start(span.start_time)
                s_end(span.end_time)
                s_duration(span.duration)
                s_attributes(span.attributes)
                children = span.child_spans
                if children:
                    child_depth = depth + 1
                    for child in reversed(children):
                        push((child, span_id, child_depth))
                span_id += 1
            return span_id

        def walk(conversation: Conversation) -> str:
            name = conversation.name
            match = name_match(name) if name is not None else None
            if match is None:
                raise _Invalid(f"name: not a conversation resource name: {str(name)[:120]!r}")
            turn_count = int32(conversation.turn_count, "turnCount")
            c_app(match.group(1))
            c_id(match.group(2))
            c_start(conversation.start_time)
            c_end(conversation.end_time)
            c_turn_count(turn_count)
            c_source(enum_name(conversation.source, "Conversation.Source", "source"))
            c_channel(enum_name(conversation.channel_type, "Conversation.ChannelType", "channelType"))
            c_inputs(
                [enum_name(t, "Conversation.InputType", "inputTypes") for t in conversation.input_types or ()]
            )
            c_entry(conversation.entry_agent)
            c_deployment(conversation.deployment)
            c_version(conversation.app_version)
            c_language(conversation.language_code)
            for turn_index, turn in enumerate(conversation.turns or ()):
                message_items = turn.messages or ()
                root = turn.root_span
                if root is None:
                    span_count = 0
                    t_start(None)
                    t_duration(None)
                else:
                    span_count = add_spans(root)
                    t_start(root.start_time)
                    t_duration(root.duration)
                t_index(turn_index)
                t_text(turn.user_intended_text)
                t_messages(len(message_items))
                t_spans(span_count)
                add_messages(turn_index, message_items)
            if not conversation.turns:  # with turns, the deprecated top-level messages repeat them
                add_messages(None, conversation.messages or ())
            return name

        return walk


def flatten_conversations(conversations: Iterable[Any]) -> tuple[dict[str, pa.Table], list[Reject]]:
    flattener = ConversationFlattener()
    for conversation in conversations:
        flattener.add(conversation)
    batches = flattener.take_batches()
    return {name: pa.Table.from_batches([batch]) for name, batch in batches.items()}, flattener.take_rejects()
