"""Flatten step: a partition's raw records → Parquet per table in streamed batches, JSON decoded once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import msgspec
import pyarrow as pa

from pipelines.ces.records import ApiRecord
from pipelines.ces.tools import GET_CONVERSATION, LIST_CONVERSATIONS, resolve_conversations
from pipelines.ces.window import TimeWindow
from pipelines.lake.store import Lake
from pipelines.protojson import deepjson
from pipelines.transform.conversation_json import LakeConversation
from pipelines.transform.conversations import REJECT_SOURCE, ConversationFlattener
from pipelines.transform.rejects import Reject, rejects_batch
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS

CONVERSATIONS_DATASET = "conversations"
BATCH_SIZE = 200
"""Conversations flattened before their batches are written (memory stays flat)."""


@dataclass
class FlattenResult:
    rows: dict[str, int] = field(default_factory=dict)
    rejects: int = 0


def flatten_conversation_partition(lake: Lake, app: str, day: date) -> FlattenResult:
    """Rewrite every conversation table (and the rejects) of one partition from its raw records."""
    window = TimeWindow.for_day(day)
    prefix = f"{app}/conversations/"
    flattener = ConversationFlattener()
    rejects: list[Reject] = []

    def reject(obj: Any, reason: str) -> None:
        value = obj.value() if isinstance(obj, LakeConversation) else obj
        rejects.append(Reject.of(REJECT_SOURCE, value, reason))

    result = FlattenResult()
    with ExitStack() as stack:
        writers = {
            spec.name: stack.enter_context(lake.table_writer(spec, app, day)) for spec in CONVERSATION_TABLES
        }

        def flush() -> None:
            for name, batch in flattener.take_batches().items():
                writers[name].write(batch)
            rejects.extend(flattener.take_rejects())

        records = lake_conversation_records(lake.read_raw_lines(CONVERSATIONS_DATASET, app, day))
        for conversation in resolve_conversations(records, window, on_reject=reject, view=_listing):
            if not str(_listing(conversation).get("name", "")).startswith(prefix):
                reject(conversation, f"conversation does not belong to app {app}")
                continue
            flattener.add(conversation)
            if len(flattener) >= BATCH_SIZE:
                flush()
        flush()
        with lake.table_writer(REJECTS, app, day) as rejects_writer:
            rejects_writer.write(rejects_batch(rejects, app, day))
        for name, writer in writers.items():
            result.rows[name] = writer.rows
    result.rejects = len(rejects)
    # Arrow's allocator keeps what the partition's batches freed; the load that follows in the
    # same process would otherwise peak ~30 MB higher.
    pa.default_memory_pool().release_unused()
    return result


def _listing(item: Any) -> Any:
    return item.listing() if isinstance(item, LakeConversation) else item


class _Record(msgspec.Struct):
    tool: str
    arguments: dict[str, Any]
    result: msgspec.Raw
    fetched_at: Any = None
    refused: Any = None


class _Page(msgspec.Struct):
    conversations: list[msgspec.Raw] = []
    nextPageToken: Any = None  # the JSON field name


_RECORD = msgspec.json.Decoder(_Record)
_PAGE = msgspec.json.Decoder(_Page)


def lake_conversation_records(lines: Iterable[bytes]) -> Iterator[Any]:
    """Raw lines as records of `LakeConversation`s; other lines parsed as they are, for the resolver."""
    for line in lines:
        try:
            record = _RECORD.decode(line)
            if record.tool == LIST_CONVERSATIONS:
                page = _PAGE.decode(record.result)
                result: Any = {
                    "conversations": [LakeConversation(raw) for raw in page.conversations],
                    "nextPageToken": page.nextPageToken,
                }
            elif record.tool == GET_CONVERSATION:
                result = LakeConversation(record.result)
            else:
                raise ValueError("not a conversation record")
        except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError; deep nesting
            yield deepjson.loads(line)
            continue
        fetched_at = record.fetched_at if isinstance(record.fetched_at, str) else ""
        refused = record.refused if isinstance(record.refused, str) else None
        yield ApiRecord(record.tool, record.arguments, result, fetched_at, refused)
