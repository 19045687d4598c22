"""Tool calls kept as the raw lake's records (`ApiRecord`), and the generic page-token pager."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from pipelines.ces.errors import (
    CesError,
    CesPagingError,
    CesProtocolError,
    CesRpcError,
    CesToolError,
)
from pipelines.ces.records import ApiRecord

logger = logging.getLogger("pipelines.ces.paging")

DEFAULT_MAX_PAGES = 100_000
"""A guard against a server that never stops handing out new tokens."""
DEFAULT_MAX_EMPTY_PAGES = 20
"""Pages in a row holding no item but a next page token before a listing is given up
(`CES_MAX_EMPTY_PAGES`): a server that hands out fresh tokens for empty pages forever would
otherwise spend the quota until `DEFAULT_MAX_PAGES`."""
DEFAULT_MAX_RESTARTS = 3
"""How many times a listing starts again from its first page after its page token was refused."""
_PAGE_TOKEN = re.compile(r"page[ _-]?token", re.IGNORECASE)


class ToolClient(Protocol):
    """The part of `CesMcpClient` the tool layer uses."""

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, idempotent: bool | None = None
    ) -> dict[str, Any]: ...


def fetch_record(
    client: ToolClient,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    idempotent: bool | None = None,
    keep: Callable[[CesError], bool] | None = None,
) -> ApiRecord:
    """One call's record. A refusal of this call by a server that understood it (a tool error or a
    JSON-RPC error) that `keep` accepts is recorded in the record's `refused`, not raised."""
    arguments = dict(arguments)
    try:
        result, refused = client.call_tool(tool, arguments, idempotent=idempotent), None
    except (CesToolError, CesRpcError) as exc:
        if keep is None or not keep(exc):
            raise
        result, refused = {}, exc.server_message or str(exc)
    fetched_at = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    return ApiRecord(tool, arguments, result, fetched_at, refused)


def not_found(refusal: CesError) -> bool:
    """A refusal that says the object does not exist (deleted since it was listed or seen)."""
    return refusal.google.code == "NOT_FOUND"


def page_items(result: Mapping[str, Any], items_key: str, tool: str) -> list[Any]:
    """The items of one page; proto3 JSON omits an empty list, so a missing key is no items."""
    items = result.get(items_key, [])
    if not isinstance(items, list):
        raise CesProtocolError(f"{tool}: {items_key!r} is not an array")
    return items


def iter_page_records(
    client: ToolClient,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    items_key: str,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_empty_pages: int = DEFAULT_MAX_EMPTY_PAGES,
) -> Iterator[ApiRecord]:
    """Each page of a list tool as a record, following `nextPageToken`. A token handed out twice,
    `max_pages` pages or `max_empty_pages` empty pages in a row are a CesPagingError; a refused
    (expired) token restarts the listing, at most `DEFAULT_MAX_RESTARTS` times (consumers keep
    the first listing of each item)."""
    seen: set[str] = set()
    token: str | None = None
    restarts = empty = 0
    for page_number in range(1, max_pages + 1):
        try:
            record = fetch_record(client, tool, {**arguments, "pageToken": token} if token else arguments)
        except (CesToolError, CesRpcError) as exc:
            if token is None or not _refuses_page_token(exc):
                raise
            if restarts >= DEFAULT_MAX_RESTARTS:
                raise CesPagingError(
                    f"{tool}: the server refused its page token again after {restarts} fresh "
                    f"listing(s) from the first page; giving up: {exc}"
                ) from exc
            restarts += 1
            logger.info(
                "%s: page token refused (%s); listing again from the first page (%d of %d)",
                tool,
                exc,
                restarts,
                DEFAULT_MAX_RESTARTS,
            )
            seen.clear()
            token = None
            continue
        empty = 0 if page_items(record.result, items_key, tool) else empty + 1
        yield record
        next_token = record.result.get("nextPageToken")
        if not next_token:
            return
        if empty >= max_empty_pages:
            raise CesPagingError(
                f"{tool} handed out {empty} empty pages in a row, each with a next page token; giving up "
                "(CES_MAX_EMPTY_PAGES)"
            )
        if not isinstance(next_token, str):
            raise CesProtocolError(f"{tool}: nextPageToken is not a string on page {page_number}")
        if next_token in seen:
            raise CesPagingError(f"{tool} returned the page token {next_token!r} twice (page {page_number})")
        seen.add(next_token)
        token = next_token
    raise CesPagingError(f"{tool} still had more pages after {max_pages}; giving up")


def _refuses_page_token(error: CesError) -> bool:
    message = getattr(error, "server_message", None) or str(error)
    return bool(_PAGE_TOKEN.search(message))
