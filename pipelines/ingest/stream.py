"""Fetch and flatten of one partition in one pass: API → raw lake file and Parquet files together.

The bulk ingest (`ces-pipeline ingest --bulk`) runs this in its worker processes. Each record
goes into the raw lake file as its line and on to the flattener as it arrives, so it is never
read back, while the fetch's threads keep requesting. Each page is decoded once, by the
paging thread, into the form a flatten of the lake file reads its line into (`read_page`),
which is also what the fetch judges it by: the flattener sees what it would read from the
file, so the tables are those a fetch then a flatten would leave. The raw file is committed
first, once every record is in, then the tables. A failure anywhere leaves the partition's
previous files as they were.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from typing import Any

from pipelines.ces.client import CesMcpClient
from pipelines.ces.paging import ApiRecord
from pipelines.config import CesSettings
from pipelines.ingest.fetch import FetchResult, conversation_records
from pipelines.ingest.flatten import (
    CONVERSATIONS_DATASET,
    FlattenResult,
    flatten_conversation_partition,
    flattener_record,
    read_page,
)
from pipelines.lake.store import JsonLinesWriter, Lake
from pipelines.transform.conversation_json import listing_view


def fetch_and_flatten_conversation_partition(
    client: CesMcpClient,
    lake: Lake,
    app: str,
    day: date,
    *,
    sources: Sequence[str] = (),
    page_size: int = 100,
) -> tuple[FetchResult, FlattenResult]:
    """Fetch the app's conversations of `day` into the raw lake and flatten them as they come."""
    fetched = FetchResult(app, day)

    @contextmanager
    def records() -> Iterator[Iterator[ApiRecord]]:
        fetching = conversation_records(
            client, app, day, fetched, sources, page_size, decode_page=read_page, view=listing_view
        )
        try:
            with lake.raw_writer(CONVERSATIONS_DATASET, app, day) as raw:
                tee = _written(fetching, raw)
                yield tee
                if next(tee, None) is not None:  # a partial raw file must not replace the old one
                    raise RuntimeError(f"{app} {day}: the flatten stopped before the last fetched record")
        finally:
            fetching.close()  # stops the fetch's threads when the flatten failed
        fetched.record_file(raw.written(), lake)

    return fetched, flatten_conversation_partition(lake, app, day, records=records())


def _written(records: Iterator[ApiRecord], raw: JsonLinesWriter) -> Iterator[ApiRecord]:
    """Each record into the raw file as its line, then on to the flattener in the form it reads."""
    for record in records:
        raw.write(record.to_json())
        yield flattener_record(record)


def ingest_task(lake_root: str, app: str, day: date, settings: CesSettings) -> dict[str, Any]:
    """A bulk ingest worker's task (see `pipelines.ingest.backfill`): one partition, with a
    client of its own; the request rate is shared through `settings.rate_limit_file`."""
    with CesMcpClient(settings) as client:
        fetched, flattened = fetch_and_flatten_conversation_partition(
            client, Lake(lake_root), app, day, sources=settings.sources, page_size=settings.page_size
        )
        stats = client.stats
    return {
        "rows": flattened.rows,
        "rejects": flattened.rejects,
        "pages": fetched.pages,
        "listed": fetched.listed,
        "hydrated": fetched.hydrated,
        "requests": stats.requests,
        "retries": stats.retries,
        "bytes_received": stats.bytes_received,
    }
