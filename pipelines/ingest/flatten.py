"""Flatten step: the raw records of one (app, day) partition → one Parquet file per table.

Reads the lake only, so the same code serves a fresh ingest and an offline rebuild.
Conversations are flattened in batches of `batch_size` and streamed to the Parquet writers,
which keeps memory flat however large the partition is.

The cyclic garbage collector is paused while a partition is decoded and flattened: JSON
decoding allocates millions of small containers, none of them in a cycle, and every
collection would walk all of them (3.5x slower decoding). Reference counting frees them as
before. Between batches, a young-generation collection runs only once more than
`YOUNG_OBJECTS_BEFORE_COLLECT` container objects have outlived it: what cycles would leave
behind. A collection after every batch walked the ~5,000 live containers of the page being
read each time, 2% of the flatten's CPU, and never found a cycle.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import msgspec

from pipelines.ces.paging import ApiRecord
from pipelines.ces.tools import GET_CONVERSATION, LIST_CONVERSATIONS, resolve_conversations
from pipelines.ces.window import TimeWindow
from pipelines.ingest.rejects import rejects_batch
from pipelines.lake.store import Lake
from pipelines.transform import deepjson
from pipelines.transform.conversation_json import Conversation, LakeConversation, PageText, listing_view
from pipelines.transform.conversations import REJECT_SOURCE, ConversationFlattener
from pipelines.transform.rows import Reject
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS

CONVERSATIONS_DATASET = "conversations"
DEFAULT_BATCH_SIZE = 200
YOUNG_OBJECTS_BEFORE_COLLECT = 50_000
"""Container objects allocated and still alive since the last collection (`gc.get_count()[0]`)
past which a batch ends with a young-generation collection (about ten pages' worth)."""


@dataclass
class FlattenResult:
    """What one partition's flatten produced."""

    app: str
    day: date
    rows: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    rejects: int = 0


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (restored after, as it was)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def flatten_conversation_partition(
    lake: Lake,
    app: str,
    day: date,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    records: AbstractContextManager[Iterable[Any]] | None = None,
) -> FlattenResult:
    """Rewrite every conversation table (and the rejects) of one partition from its raw records.

    The records are read from the partition's raw file (`lake_conversation_records`), or
    `records` provides them in the same form (a fetch writing that file as it goes, see
    `read_page` and `flattener_record`): that context is left once every record is read,
    before any table is committed, and an error while reading them is raised into it.
    """
    window = TimeWindow.for_day(day)
    prefix = f"{app}/conversations/"
    flattener = ConversationFlattener()
    rejects: list[Reject] = []

    def reject(obj: Any, reason: str) -> None:
        if isinstance(obj, LakeConversation):
            obj = obj.value()
        name = obj.get("name") if isinstance(obj, dict) else None
        rejects.append(Reject(REJECT_SOURCE, name if isinstance(name, str) else None, reason, obj))

    result = FlattenResult(app, day)
    with ExitStack() as stack:
        stack.enter_context(gc_paused())
        writers = {
            spec.name: stack.enter_context(lake.table_writer(spec, app, day)) for spec in CONVERSATION_TABLES
        }

        def flush() -> None:
            for name, batch in flattener.take_batches().items():
                writers[name].write(batch)
            if gc.get_count()[0] > YOUNG_OBJECTS_BEFORE_COLLECT:
                gc.collect(0)

        with records or nullcontext(
            lake_conversation_records(lake.read_raw_lines(CONVERSATIONS_DATASET, app, day))
        ) as read:
            for conversation in resolve_conversations(read, window, on_reject=reject, view=listing_view):
                if not str(listing_view(conversation).get("name", "")).startswith(prefix):
                    reject(conversation, f"conversation does not belong to app {app}")
                    continue
                flattener.add(conversation)
                if len(flattener) >= batch_size:
                    flush()
            flush()
        rejects.extend(flattener.take_rejects())
        with lake.table_writer(REJECTS, app, day) as rejects_writer:
            rejects_writer.write(rejects_batch(rejects, app, day))
            result.files[REJECTS.name] = lake.url(rejects_writer.path)
        for name, writer in writers.items():
            result.rows[name] = writer.rows
            result.files[name] = lake.url(writer.path)
    result.rejects = len(rejects)
    return result


class _RawRecord(msgspec.Struct):
    tool: str
    arguments: dict[str, Any]
    result: msgspec.Raw
    fetched_at: Any = None


class _RawPage(msgspec.Struct):
    conversations: list[msgspec.Raw] = []
    nextPageToken: Any = None  # the JSON field name


class _TypedPage(msgspec.Struct):
    conversations: list[Conversation] = []
    nextPageToken: Any = None


class _TypedPageRecord(msgspec.Struct):
    """A list_conversations record whose every conversation has the typed shape, decoded whole."""

    tool: str
    arguments: dict[str, Any]
    result: _TypedPage
    fetched_at: Any = None


class _RawPageRecord(msgspec.Struct):
    """A list_conversations record read in one pass: its page's conversations as JSON text."""

    tool: str
    arguments: dict[str, Any]
    result: _RawPage
    fetched_at: Any = None


_RECORD = msgspec.json.Decoder(_RawRecord)
_PAGE = msgspec.json.Decoder(_RawPage)
_PAGE_RECORD = msgspec.json.Decoder(_RawPageRecord)
_TYPED_PAGE_RECORD = msgspec.json.Decoder(_TypedPageRecord)
_PAGE_RECORD_START = b'{"tool":"' + LIST_CONVERSATIONS.encode() + b'"'
"""How the fetcher's page records begin (the lake writer keeps key order)."""


def lake_conversation_records(lines: Iterable[bytes]) -> Iterator[Any]:
    """Raw-lake lines as records whose conversations are `LakeConversation`s: JSON text with its
    typed decode, what the columnar flattener walks.

    A page is decoded whole into typed conversations, their texts split off only if needed
    (`PageText`); a page holding a conversation of another shape is split first and each
    conversation decoded on its own. A line whose envelope is not what the fetcher writes (or
    not JSON at all) is parsed as it stands, for `resolve_conversations` to read or refuse as
    it does any record.
    """
    for line in lines:
        record: Any = None
        if line.startswith(_PAGE_RECORD_START):
            try:
                record = _TYPED_PAGE_RECORD.decode(line)
                result: Any = _typed_page_result(record.result, PageText(line, _split_page_record))
            except (ValueError, RecursionError):  # a conversation of another shape: split the page
                record = None
            else:
                yield ApiRecord(record.tool, record.arguments, result, _fetched_at(record))
                continue
            with contextlib.suppress(ValueError, RecursionError):  # not a page after all: read below
                record = _PAGE_RECORD.decode(line)
        try:
            if record is None:
                record = _RECORD.decode(line)
            if record.tool == LIST_CONVERSATIONS:
                page = record.result if isinstance(record.result, _RawPage) else _PAGE.decode(record.result)
                result = _page_result(page)
            elif record.tool == GET_CONVERSATION:
                result = _conversation_result(record.result)
            else:
                raise ValueError("not a conversation record")
        except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError; deep nesting
            yield deepjson.loads(line)
            continue
        yield ApiRecord(record.tool, record.arguments, result, _fetched_at(record))


def _fetched_at(record: _RawRecord | _RawPageRecord | _TypedPageRecord) -> str:
    return record.fetched_at if isinstance(record.fetched_at, str) else ""


def _page_result(page: _RawPage) -> dict[str, Any]:
    return {
        "conversations": [LakeConversation(raw) for raw in page.conversations],
        "nextPageToken": page.nextPageToken,
    }


def _typed_page_result(page: _TypedPage, text: PageText) -> dict[str, Any]:
    return {
        "conversations": [
            LakeConversation.on_page(conversation, text, index)
            for index, conversation in enumerate(page.conversations)
        ],
        "nextPageToken": page.nextPageToken,
    }


def _split_page_record(line: bytes) -> list[msgspec.Raw]:
    return _PAGE_RECORD.decode(line).result.conversations


def _conversation_result(raw: bytes | msgspec.Raw) -> LakeConversation:
    conversation = LakeConversation(raw)
    if conversation.typed is None:
        raise ValueError("not a conversation object")
    return conversation
