"""Fetch and flatten of one partition in one pass: API → raw lake file and Parquet files together.

The bulk ingest (`ces-pipeline ingest --bulk`) runs this in its worker processes. Each raw
line goes into the raw lake file and on to the flattener as it arrives, so it is never read
back and decoded again, while the fetch's threads keep requesting. The flattener reads the
lines with the same code as a flatten of the lake file, so the tables are those a fetch then
a flatten would leave; the raw file is committed first, once every line is in, then the
tables. A failure anywhere leaves the partition's previous files as they were.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from typing import Any

from pipelines.ces.client import CesMcpClient
from pipelines.config import CesSettings
from pipelines.ingest.fetch import FetchResult, conversation_lines
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, FlattenResult, flatten_conversation_partition
from pipelines.lake.store import JsonLinesWriter, Lake


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
    def lines() -> Iterator[Iterator[bytes]]:
        fetching = conversation_lines(client, app, day, fetched, sources, page_size)
        try:
            with lake.raw_writer(CONVERSATIONS_DATASET, app, day) as raw:
                tee = _written(fetching, raw)
                yield tee
                if next(tee, None) is not None:  # a partial raw file must not replace the old one
                    raise RuntimeError(f"{app} {day}: the flatten stopped before the last fetched line")
        finally:
            fetching.close()  # stops the fetch's threads when the flatten failed
        fetched.record_file(raw.written(), lake)

    return fetched, flatten_conversation_partition(lake, app, day, lines=lines())


def _written(lines: Iterator[bytes], raw: JsonLinesWriter) -> Iterator[bytes]:
    for line in lines:
        raw.write(line)
        yield line


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
