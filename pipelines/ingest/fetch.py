"""Fetch step: the CES API → the raw records of one (app, day) partition in the lake.

The records are streamed into the lake file as they arrive; the file replaces the previous
one only when the whole partition was fetched, so a failed fetch leaves the old data intact.

Requests never wait for the writing: pages are read ahead by a paging thread and hydrated by
worker threads (`iter_conversation_records`), so this thread only encodes and compresses."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from pipelines.ces.client import CesMcpClient
from pipelines.ces.paging import DEFAULT_MAX_EMPTY_PAGES
from pipelines.ces.tools import LIST_CONVERSATIONS, iter_conversation_records
from pipelines.ces.window import TimeWindow
from pipelines.ingest.flatten import CONVERSATIONS_DATASET
from pipelines.lake.records import ApiRecord
from pipelines.lake.store import Lake, WrittenFile


@dataclass
class FetchResult:
    """What one partition's fetch brought in."""

    app: str
    day: date
    pages: int = 0
    listed: int = 0
    outside: int = 0
    """Listed conversations that started outside the day: the server ignored the filter."""
    hydrated: int = 0
    records: int = 0
    raw_bytes: int = 0
    path: str = ""

    def record_file(self, written: WrittenFile, lake: Lake) -> None:
        """The raw file the fetch wrote, once it is in place."""
        self.records, self.raw_bytes, self.path = written.rows, written.bytes, lake.url(written.path)


def fetch_conversation_partition(
    client: CesMcpClient,
    lake: Lake,
    app: str,
    day: date,
    *,
    sources: Sequence[str] = (),
    page_size: int = 100,
    max_empty_pages: int = DEFAULT_MAX_EMPTY_PAGES,
) -> FetchResult:
    """Page through the app's conversations that started on `day` (UTC) into the raw lake."""
    result = FetchResult(app, day)

    records = conversation_records(client, app, day, result, sources, page_size, max_empty_pages)
    written = lake.write_raw_lines(CONVERSATIONS_DATASET, app, day, (record.to_json() for record in records))
    result.record_file(written, lake)
    return result


def conversation_records(
    client: CesMcpClient,
    app: str,
    day: date,
    result: FetchResult,
    sources: Sequence[str],
    page_size: int,
    max_empty_pages: int,
) -> Iterator[ApiRecord]:
    """The partition's records as they are fetched, counted into `result`."""

    def count_page(listed: int, outside: int) -> None:
        result.pages += 1
        result.listed += listed
        result.outside += outside

    for record in iter_conversation_records(
        client,
        app,
        TimeWindow.for_day(day),
        sources=sources,
        page_size=page_size,
        max_empty_pages=max_empty_pages,
        on_page=count_page,
    ):
        if record.tool != LIST_CONVERSATIONS:
            result.hydrated += 1
        yield record
