"""Flatten CES `Conversation` JSON into the conversation tables.

Two flatteners with one result. `RowConversationFlattener`, the reference, walks parsed JSON
(dicts) and checks every value as it reads it, building a row tuple per table. The fast
`ConversationFlattener` walks msgspec structs (`conversation_json`), appends values to one
list per column and converts whole columns in Arrow when a batch is taken; whatever it
cannot vouch for goes to the reference. A conversation that violates the schema is rolled
back out of every table and recorded as a reject with its reason; the rest of the batch loads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from msgspec import UNSET, Raw

from pipelines.transform import values as v
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
from pipelines.transform.rows import Reject, RowFlattener, TableBuffers
from pipelines.transform.schemas import (
    AGENT_TRANSFERS,
    CHUNKS,
    CONVERSATION_TABLES,
    CONVERSATIONS,
    MESSAGES,
    SPANS,
    TIMESTAMP,
    TOOL_CALLS,
    TOOL_RESPONSES,
    TURNS,
    TableSpec,
)
from pipelines.transform.timeparse import duration_column, timestamp_column

CONVERSATION_NAME = re.compile(r"(projects/[^/]+/locations/[^/]+/apps/[^/]+)/conversations/([^/]+)")
REJECT_SOURCE = "conversation"


class RowConversationFlattener(RowFlattener):
    """The reference flattener: row tuples per table, every value checked as it is read.

    It defines what every table holds and why a conversation is rejected. The columnar
    `ConversationFlattener` below produces exactly the same batches and rejects, faster; it
    hands every batch it cannot vouch for to this one.
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

    def discard(self) -> None:
        """Drop the rows collected since the last take (the rejects stay)."""
        self._buffers.discard()

    # -- the walk ---------------------------------------------------------------------------

    def _add(self, conversation: Any) -> None:
        conversation = v.message(conversation, "conversation")
        name = v.text(conversation.get("name"), "name")
        match = CONVERSATION_NAME.fullmatch(name or "")
        if match is None:
            raise v.SchemaViolation(f"name: not a conversation resource name: {str(name)[:120]!r}")
        app, conversation_id = match.groups()
        start_ns = v.timestamp_nanos(conversation.get("startTime"), "startTime")
        end_ns = v.timestamp_nanos(conversation.get("endTime"), "endTime")
        start = start_ns // 1_000 if start_ns is not None else None
        end = end_ns // 1_000 if end_ns is not None else None
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
                (end_ns - start_ns) / 1e9 if start_ns is not None and end_ns is not None else None,
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


_OPEN_BRACE, _LETTER_N = ord("{"), ord("n")
_MAX_STRING_BYTES = 2**31 - 1


def _json_column(values: list[Raw], type_: pa.DataType) -> pa.Array:
    """A JSON column from struct-valued members' JSON text: an object's text as it is, an
    absent member or a JSON null as null; any other value is left to the reference flattener.

    The texts are joined into one buffer and the column is built over it, with no Python
    object per value. msgspec hands out only well-formed JSON as `Raw`, so a text is an
    object when it starts with `{` and is null when it is four bytes starting with `n`.
    The buffer is checked to be UTF-8, as a string column must be.
    """
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > _MAX_STRING_BYTES:
        raise _Unvouched  # more text than a string column's 32-bit offsets reach
    offsets = offsets.astype(np.int32)
    data = np.frombuffer(b"".join(values), dtype=np.uint8)
    sent = lengths > 0
    first = np.zeros(len(values), dtype=np.uint8)
    first[sent] = data[offsets[:-1][sent]]
    objects = first == _OPEN_BRACE
    nulls = (first == _LETTER_N) & (lengths == 4)
    if not np.all(objects | nulls | ~sent):
        raise _Unvouched
    validity = None if objects.all() else pa.array(objects).buffers()[1]
    column = pa.Array.from_buffers(type_, len(values), [validity, pa.py_buffer(offsets), pa.py_buffer(data)])
    column.validate(full=True)  # UTF-8, or ArrowInvalid: the reference flattener decides
    return column


class _Unvouched(Exception):
    """The columnar walk met something it leaves to the reference flattener."""


# What an absent (null) nested message reads as.
_NO_BLOB, _NO_IMAGE, _NO_TOOLSET = Blob(), Image(), ToolsetTool()
_NO_CALL, _NO_RESPONSE, _NO_TRANSFER = ToolCall(), ToolResponse(), AgentTransfer()

_TIMESTAMP_COLUMNS = {
    "conversations": ("start_time", "end_time"),
    "turns": ("start_time",),
    "messages": ("event_time",),
    "spans": ("start_time", "end_time"),
}
_DURATION_COLUMNS = {"turns": ("duration_seconds",), "spans": ("duration_seconds",)}


@dataclass(frozen=True)
class _Positions:
    """A child table's position columns, computed when a batch is converted instead of being
    appended row by row: its rows come in runs, one per row of the owner table, as long as the
    owner's `count` says. Each row repeats its owner's `inherited` columns and is numbered
    from 0 within the run (`position`). A span or chunk row thus costs two or three appends
    fewer, and their columns are built from integer arrays (flatten CPU -3%)."""

    owner: str
    count: str
    inherited: tuple[str, ...]
    position: str


_POSITIONS = {
    SPANS.name: _Positions(TURNS.name, "span_count", ("turn_index",), "span_id"),
    CHUNKS.name: _Positions(MESSAGES.name, "chunk_count", ("turn_index", "message_index"), "chunk_index"),
}


def _positioned(owner: pa.RecordBatch, positions: _Positions, rows: int) -> dict[str, pa.Array]:
    """The position columns of a child table with `rows` rows, from its owner's batch. (Were
    the owner's counts not to add up to `rows`, the batch would fail to assemble, ArrowInvalid,
    and go to the reference flattener.)"""
    counts = owner.column(positions.count).to_numpy(zero_copy_only=False)
    owner_rows = np.repeat(np.arange(len(counts)), counts)
    run_starts = np.cumsum(counts) - counts
    columns = {name: owner.column(name).take(owner_rows) for name in positions.inherited}
    columns[positions.position] = pa.array((np.arange(rows) - run_starts[owner_rows]).astype(np.int32))
    return columns


class _Columns:
    """The value lists of one table, one list per column (conversation_name is derived, and so
    are the `_POSITIONS` columns)."""

    __slots__ = ("lists", "offsets", "spec")

    def __init__(self, spec: TableSpec):
        self.spec = spec
        skip = {"conversation_name"} | ({"duration_seconds"} if spec is CONVERSATIONS else set())
        if spec.name in _POSITIONS:
            positions = _POSITIONS[spec.name]
            skip |= {*positions.inherited, positions.position}
        self.lists: dict[str, list[Any]] = {f.name: [] for f in spec.schema if f.name not in skip}
        self.offsets: list[int] = [0]
        """Row count after each conversation of the batch: which rows belong to which."""

    @property
    def lead(self) -> list[Any]:
        return next(iter(self.lists.values()))

    def truncate(self, rows: int) -> None:
        for values in self.lists.values():
            del values[rows:]

    def clear(self) -> None:
        for values in self.lists.values():
            values.clear()
        self.offsets[1:] = []


class ConversationFlattener:
    """Accumulates conversations and hands out one record batch per table.

    Use `add()` per conversation and `take_batches()` every few hundred conversations; the
    flattener keeps nothing after a take, which is what bounds memory on large ingests.

    Columnar: the walk appends each value to its column's list, unconverted; strings,
    timestamps and durations are checked and converted a whole column at a time in Arrow when
    the batch is taken. Anything the columnar path cannot vouch for (a wrong type, an
    unusual timestamp spelling) sends the batch to `RowConversationFlattener`, the reference,
    so batches and rejects are exactly the reference's, value for value. A conversation the
    reference rejects is rolled back out of every table and recorded as a reject; rejects
    come out in the order the conversations were added. `add()` returns False for a
    conversation rejected at once; the column checks may reject one more when the batch is
    taken, and `take_rejects()` lists those too.
    """

    def __init__(self) -> None:
        self._tables = {spec.name: _Columns(spec) for spec in CONVERSATION_TABLES}
        self._reference = RowConversationFlattener()
        self._objects: list[Any] = []
        self._ordinals: list[int] = []
        self._names: list[str] = []
        self._unvouched = False
        self._added = 0
        self._rejects: list[tuple[int, Reject]] = []
        self._ready: list[dict[str, pa.RecordBatch]] = []
        self._walk = self._build_walk()

    def __len__(self) -> int:
        """Conversations flattened since the last take (not counting those rejected at once)."""
        return len(self._objects) + sum(batch[CONVERSATIONS.name].num_rows for batch in self._ready)

    def add(self, conversation: Any) -> bool:
        """Flatten one conversation, parsed JSON or a `LakeConversation` (JSON text read from
        the lake); False when it is rejected (rolled back, recorded as a reject)."""
        ordinal = self._added
        self._added += 1
        if not isinstance(conversation, LakeConversation):
            conversation = LakeConversation.of(conversation)
        try:
            if conversation.typed is None:
                raise _Unvouched
            name = self._walk(conversation.typed)
        except Exception:
            for table, rows in zip(self._tables.values(), self._tables_rows(), strict=True):
                table.truncate(rows)
            reject = self._reference_reject(conversation.value())
            if reject is not None:
                self._rejects.append((ordinal, reject))
                return False
            self._unvouched = True  # valid after all: the reference flattens the batch
            name = conversation.value()["name"]
        for table in self._tables.values():
            table.offsets.append(len(table.lead))
        self._objects.append(conversation)
        self._ordinals.append(ordinal)
        self._names.append(name)
        return True

    def take_batches(self) -> dict[str, pa.RecordBatch]:
        """One record batch per conversation table (possibly empty), then start afresh."""
        self._settle()
        ready, self._ready = self._ready, []
        if len(ready) == 1:
            return ready[0]
        return {
            spec.name: pa.concat_batches([batch[spec.name] for batch in ready])
            if ready
            else pa.RecordBatch.from_pylist([], schema=spec.schema)
            for spec in CONVERSATION_TABLES
        }

    def take_rejects(self) -> list[Reject]:
        """Every reject so far (the pending batch checked first), in the order added."""
        self._settle()
        rejects, self._rejects = sorted(self._rejects, key=lambda item: item[0]), []
        return [reject for _, reject in rejects]

    # -- settling a batch ---------------------------------------------------------------------

    def _tables_rows(self) -> list[int]:
        return [table.offsets[-1] for table in self._tables.values()]

    def _reference_reject(self, conversation: Any) -> Reject | None:
        """The reference's verdict on one conversation: its reject, or None when it flattens."""
        reference = self._reference
        accepted = reference.add(conversation)
        reference.discard()
        return None if accepted else reference.take_rejects()[0]

    def _settle(self) -> None:
        """Convert the pending batch (columnar, or by the reference when unvouched) into `_ready`."""
        if not self._objects:
            if not self._ready:
                self._ready.append(self._empty_batches())
            return
        batches = None
        if not self._unvouched:
            try:
                batches = self._convert()
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, _Unvouched):
                batches = None  # a value of the wrong type: the reference names it
        if batches is None:
            batches = self._reference_batches()
        for table in self._tables.values():
            table.clear()
        self._objects, self._ordinals, self._names = [], [], []
        self._unvouched = False
        self._ready.append(batches)

    def _empty_batches(self) -> dict[str, pa.RecordBatch]:
        return {spec.name: pa.RecordBatch.from_pylist([], schema=spec.schema) for spec in CONVERSATION_TABLES}

    def _reference_batches(self) -> dict[str, pa.RecordBatch]:
        reference = self._reference
        for ordinal, conversation in zip(self._ordinals, self._objects, strict=True):
            if not reference.add(conversation.value()):
                self._rejects.append((ordinal, reference.take_rejects()[0]))
        return reference.take_batches()

    def _convert(self) -> dict[str, pa.RecordBatch] | None:
        """The batch as Arrow, or None when a column holds a value only the reference may judge."""
        names = pa.array(self._names, type=pa.string())
        batches: dict[str, pa.RecordBatch] = {}
        for spec in CONVERSATION_TABLES:
            table = self._tables[spec.name]
            counts = np.diff(np.asarray(table.offsets, dtype=np.int64))
            timestamps = _TIMESTAMP_COLUMNS.get(spec.name, ())
            durations = _DURATION_COLUMNS.get(spec.name, ())
            arrays: dict[str, pa.Array] = {}
            if spec.name in _POSITIONS:
                positions = _POSITIONS[spec.name]
                arrays.update(_positioned(batches[positions.owner], positions, len(table.lead)))
            for field in spec.schema:
                if field.name == "conversation_name":
                    arrays[field.name] = (
                        names
                        if spec is CONVERSATIONS
                        else names.take(np.repeat(np.arange(len(counts)), counts))
                    )
                    continue
                if field.name not in table.lists:
                    continue  # derived: set above or below
                values = table.lists[field.name]
                if field.name in timestamps:
                    micros = timestamp_column(pa.array(values, type=pa.string()))
                    if micros is None:
                        return None
                    arrays[field.name] = micros.cast(TIMESTAMP)
                elif field.name in durations:
                    seconds = duration_column(pa.array(values, type=pa.string()))
                    if seconds is None:
                        return None
                    arrays[field.name] = seconds
                elif field.name in spec.json_columns:
                    arrays[field.name] = _json_column(values, field.type)
                else:
                    arrays[field.name] = pa.array(values, type=field.type)
            if spec is CONVERSATIONS:
                # endTime - startTime from every digit sent, not the microsecond-truncated columns
                start = timestamp_column(pa.array(table.lists["start_time"], type=pa.string()), nanos=True)
                end = timestamp_column(pa.array(table.lists["end_time"], type=pa.string()), nanos=True)
                arrays["duration_seconds"] = pc.divide(
                    pc.cast(pc.subtract(end, start), pa.float64(), safe=False), 1e9
                )
            batches[spec.name] = pa.RecordBatch.from_arrays(
                [arrays[field.name] for field in spec.schema], schema=spec.schema
            )
        return batches

    # -- the walk -------------------------------------------------------------------------------

    def _build_walk(self) -> Callable[[Conversation], str]:
        """The per-conversation walk as a closure over every column's `append` (the hot loop).

        It walks the typed decode (`conversation_json`), whose types msgspec has checked;
        strings are appended as they are and checked column-wise later, struct-valued members
        as their JSON text.
        """
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
        name_match = CONVERSATION_NAME.fullmatch
        int32 = v.int32
        base64_size = v.base64_size
        unset = UNSET
        absent = ABSENT

        def row(columns: list[Callable[[Any], None]], *parts: tuple[Any, ...]) -> None:
            for append, value in zip(columns, [value for part in parts for value in part], strict=True):
                append(value)

        def add_chunks(turn_index: int | None, message_index: int, items: list[Chunk]) -> None:
            for chunk_index, chunk in enumerate(items):
                text = mime_type = alt_text = data_bytes = None
                payload = absent
                if chunk.text is not unset:
                    kind, text = "text", chunk.text
                elif chunk.transcript is not unset:
                    kind, text = "transcript", chunk.transcript
                elif chunk.blob is not unset:
                    kind = "blob"
                    blob = chunk.blob or _NO_BLOB
                    mime_type = blob.mime_type
                    data_bytes = base64_size(blob.data, "blob.data")
                elif chunk.image is not unset:
                    kind = "image"
                    image = chunk.image or _NO_IMAGE
                    mime_type = image.mime_type
                    data_bytes = base64_size(image.data, "image.data")
                    alt_text = image.alt_text
                elif chunk.payload:
                    kind, payload = "payload", chunk.payload
                elif chunk.updated_variables:
                    kind, payload = "updated_variables", chunk.updated_variables
                elif chunk.default_variables:
                    kind, payload = "default_variables", chunk.default_variables
                elif chunk.tool_call is not unset:
                    kind = "tool_call"
                    call = chunk.tool_call or _NO_CALL
                    toolset = call.toolset_tool or _NO_TOOLSET
                    row(
                        call_columns,
                        (turn_index, message_index, chunk_index, call.id, call.tool, toolset.toolset),
                        (toolset.tool_id, call.display_name, call.args),
                        (call.parent_tool_call_id, call.agent_name, call.target_app),
                    )
                elif chunk.tool_response is not unset:
                    kind = "tool_response"
                    response = chunk.tool_response or _NO_RESPONSE
                    toolset = response.toolset_tool or _NO_TOOLSET
                    body = response.response
                    row(
                        response_columns,
                        (turn_index, message_index, chunk_index, response.id, response.tool, toolset.toolset),
                        (toolset.tool_id, response.display_name, body, bool(body) and has_error_member(body)),
                        (response.parent_tool_call_id, response.agent_name, response.target_app),
                    )
                elif chunk.agent_transfer is not unset:
                    kind = "agent_transfer"
                    transfer = chunk.agent_transfer or _NO_TRANSFER
                    row(
                        transfer_columns,
                        (turn_index, message_index, chunk_index),
                        (transfer.target_agent, transfer.display_name),
                    )
                else:
                    kind = None
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
                raise _Unvouched
            c_app(match.group(1))
            c_id(match.group(2))
            c_start(conversation.start_time)
            c_end(conversation.end_time)
            c_turn_count(int32(conversation.turn_count, "turnCount"))
            c_source(conversation.source)
            c_channel(conversation.channel_type)
            c_inputs(conversation.input_types or [])
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
            add_messages(None, conversation.messages or ())
            return name

        return walk


def flatten_conversations(conversations: Iterable[Any]) -> tuple[dict[str, pa.Table], list[Reject]]:
    """All conversation tables for a (small) collection of conversations, plus the rejects."""
    flattener = ConversationFlattener()
    for conversation in conversations:
        flattener.add(conversation)
    batches = flattener.take_batches()
    return {name: pa.Table.from_batches([batch]) for name, batch in batches.items()}, flattener.take_rejects()
