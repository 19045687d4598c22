"""CES `Conversation` JSON → the conversation tables: a walk appends each typed value to its
column's list, and times and JSON are checked a column at a time in Arrow when a batch is taken; a
conversation with a bad value is a reject (reason and path), out of every table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from pipelines.transform import values as v
from pipelines.transform.columns import (
    DURATION_COLUMNS,
    POSITIONS,
    TIMESTAMP_COLUMNS,
    TableColumns,
    check_column,
    derived_columns,
    positioned,
    seconds_between,
)
from pipelines.transform.conversation_json import LakeConversation
from pipelines.transform.conversation_walk import build_walk
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


class ConversationFlattener:
    """A batch per table each `take_batches()` (keeping nothing); `take_rejects()`: every reject, in order."""

    def __init__(self) -> None:
        self._tables = {spec.name: TableColumns(spec, derived_columns(spec)) for spec in CONVERSATION_TABLES}
        self._kept: list[tuple[int, LakeConversation, str]] = []
        """(ordinal, conversation, name) of each conversation of the batch, in order."""
        self._added = 0
        self._rejects: list[tuple[int, Reject]] = []
        self._current: LakeConversation | None = None
        self._walk = build_walk({name: table.lists for name, table in self._tables.items()}, self._source)

    def __len__(self) -> int:
        """Conversations added since the last take and not rejected at once."""
        return len(self._kept)

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
        except v.SchemaViolation as exc:
            for table, rows in zip(self._tables.values(), marks, strict=True):
                table.truncate(rows)
            self._reject(ordinal, conversation, str(exc))
            return False
        finally:
            self._current = None
        for table in self._tables.values():
            table.offsets.append(table.rows)
        self._kept.append((ordinal, conversation, name))
        return True

    def take_batches(self) -> dict[str, pa.RecordBatch]:
        while True:
            failures, checked = self._check()
            if not failures:
                break
            for index, reason in failures.items():
                self._reject(*self._kept[index][:2], reason)
            kept = [i for i in range(len(self._kept)) if i not in failures]
            for table in self._tables.values():
                table.keep(kept)
            self._kept = [self._kept[i] for i in kept]
        batches = self._convert(checked)
        for table in self._tables.values():
            table.clear()
        self._kept = []
        return batches

    def take_rejects(self) -> list[Reject]:
        """Every reject since the last take, in the order the conversations were added."""
        rejects, self._rejects = sorted(self._rejects, key=lambda item: item[0]), []
        return [reject for _, reject in rejects]

    def _source(self) -> Any:
        """The JSON of the conversation being walked."""
        assert self._current is not None
        return self._current.value()

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
        if table == CONVERSATIONS.name:
            return ""
        if table == TURNS.name:
            return f"turns[{lists['turn_index'][row]}]."
        if table == SPANS.name:
            turns = self._tables[TURNS.name].lists
            return f"turns[{turns['turn_index'][_owner(turns['span_count'], row)[0]]}]."
        if table == CHUNKS.name:
            messages = self._tables[MESSAGES.name].lists
            owner, first = _owner(messages["chunk_count"], row)
            lists, row, chunk = messages, owner, row - first  # the chunk's message places it
        else:
            chunk = lists["chunk_index"][row] if "chunk_index" in lists else None
        turn, message = lists["turn_index"][row], lists["message_index"][row]
        prefix = "" if turn is None else f"turns[{turn}]."
        return f"{prefix}messages[{message}]." + ("" if chunk is None else f"chunks[{chunk}].")

    def _convert(self, checked: dict[tuple[str, str], pa.Array]) -> dict[str, pa.RecordBatch]:
        names = pa.array([name for _, _, name in self._kept], type=pa.string())
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


def _owner(counts: list[int], row: int) -> tuple[int, int]:
    """The row of a parent table owning child row `row`, given each parent row's count of
    children, and that parent's first child row."""
    ends = np.cumsum(counts)
    owner = int(np.searchsorted(ends, row, side="right"))
    return owner, int(ends[owner - 1]) if owner else 0
