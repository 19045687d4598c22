"""The walk of one typed `Conversation` into the conversation tables' column lists: each value
appended to its column's list as read (the hot loop of a flatten); times and JSON are left to
the batch's column checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Raw

from pipelines import resource_names
from pipelines.protojson.enums import enum_name
from pipelines.transform import values as v
from pipelines.transform.conversation_json import (
    ABSENT,
    AgentTransfer,
    Blob,
    Chunk,
    Conversation,
    Image,
    Message,
    Span,
    ToolCall,
    ToolResponse,
    ToolsetTool,
    has_error_member,
)

_NO_TOOLSET = ToolsetTool()
"""What an absent (null) toolset reference reads as."""

Lists = dict[str, dict[str, list[Any]]]
"""Each table's value lists by column."""


def _appends(columns: dict[str, list[Any]], names: str) -> list[Callable[[Any], None]]:
    """The `append` of each column named (by spaces), bound once: the walk calls them directly."""
    return [columns[name].append for name in names.split()]


def build_walk(t: Lists, source: Callable[[], Any]) -> Callable[[Conversation], str]:
    """The per-conversation walk as a closure over every column's `append` of the tables `t`;
    `source()`: the JSON of the conversation being walked, for unknown chunk kinds.
    It returns the conversation's name, or raises a `SchemaViolation`."""

    def unknown_chunk(turn_index: int | None, message_index: int, chunk_index: int) -> tuple[Any, Any]:
        """An unknown chunk kind (a later API's): its first non-null member, as JSON, or (None, absent)."""
        value = source()
        holder = value if turn_index is None else value["turns"][turn_index]
        chunk = holder["messages"][message_index]["chunks"][chunk_index]
        sent = [kind for kind, value in chunk.items() if value is not None] if isinstance(chunk, dict) else []
        if not sent:
            return None, ABSENT
        return sent[0], Raw(v.json_text(chunk[sent[0]], sent[0]).encode())

    c_app, c_id, c_start, c_end, c_turn_count, c_source, c_channel, c_inputs = _appends(
        t["conversations"],
        "app conversation_id start_time end_time turn_count source channel_type input_types",
    )
    c_entry, c_deployment, c_version, c_language = _appends(
        t["conversations"], "entry_agent deployment app_version language_code"
    )
    t_index, t_text, t_messages, t_spans, t_start, t_duration = _appends(
        t["turns"], "turn_index user_intended_text message_count span_count start_time duration_seconds"
    )
    m_turn, m_index, m_role, m_time, m_chunks = _appends(
        t["messages"], "turn_index message_index role event_time chunk_count"
    )
    k_type, k_text, k_mime, k_bytes, k_alt, k_payload = _appends(
        t["chunks"], "chunk_type text mime_type data_bytes alt_text payload"
    )
    call_columns, response_columns, transfer_columns = (
        [values.append for values in t[table].values()]
        for table in ("tool_calls", "tool_responses", "agent_transfers")
    )
    s_parent, s_depth, s_name, s_start, s_end, s_duration, s_attributes = _appends(
        t["spans"], "parent_span_id depth name start_time end_time duration_seconds attributes"
    )
    name_match = resource_names.CONVERSATION.fullmatch
    int32 = v.int32
    base64_size = v.base64_size

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
            raise v.SchemaViolation(f"name: not a conversation resource name: {str(name)[:120]!r}")
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
