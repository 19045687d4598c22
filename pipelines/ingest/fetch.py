"""Fetch step: CES → a partition's raw records, streamed to a file that replaces the old once complete."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from pipelines.ces.client import CesMcpClient
from pipelines.ces.tools import (
    DEFAULT_LISTING,
    Listing,
    PageCounts,
    iter_conversation_records,
)
from pipelines.ces.window import TimeWindow
from pipelines.ingest.flatten import CONVERSATIONS_DATASET
from pipelines.lake.store import Lake


@dataclass
class FetchResult:
    pages: int = 0
    listed: int = 0
    outside: int = 0
    """Listed conversations that started outside the day: the server ignored the filter."""
    without_traces: int = 0
    """Listed conversations of the day that came without their spans (see `lacks_traces`)."""
    hydrated: int = 0
    records: int = 0
    raw_bytes: int = 0


def fetch_conversation_partition(
    client: CesMcpClient,
    lake: Lake,
    app: str,
    day: date,
    listing: Listing = DEFAULT_LISTING,
) -> FetchResult:
    """Page through the app's conversations that started on `day` (UTC) into the raw lake."""
    result = FetchResult()

    def count_page(counts: PageCounts) -> None:
        result.pages += 1
        result.listed += counts.listed
        result.outside += counts.outside
        result.without_traces += counts.without_traces
        result.hydrated += counts.hydrated

    records = iter_conversation_records(client, app, TimeWindow.for_day(day), listing, on_page=count_page)
    written = lake.write_raw(CONVERSATIONS_DATASET, app, day, (record.to_dict() for record in records))
    result.records, result.raw_bytes = written.rows, written.bytes
    return result
