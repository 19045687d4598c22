"""The CES tools as typed calls, and how a window of conversations is fetched and replayed: both
judge each listed conversation with one `ListingJudge`, so a rebuild from the raw lake yields
exactly what the live fetch did."""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, NamedTuple

from pipelines.ces.daemon_threads import DaemonPool, prefetched
from pipelines.ces.errors import CesDataError
from pipelines.ces.paging import (
    DEFAULT_MAX_EMPTY_PAGES,
    ToolClient,
    fetch_record,
    iter_page_records,
    not_found,
    page_items,
)
from pipelines.ces.records import ApiRecord, as_record
from pipelines.ces.window import TimeWindow, lacks_traces
from pipelines.config import KNOWN_SOURCES, CesSettings
from pipelines.protojson.timeparse import parse_timestamp_micros
from pipelines.resource_names import name_of

logger = logging.getLogger("pipelines.ces.tools")

LIST_CONVERSATIONS = "list_conversations"
GET_CONVERSATION = "get_conversation"
LIST_EVALUATION_RUNS = "list_evaluation_runs"
GET_EVALUATION_RUN = "get_evaluation_run"
LIST_EVALUATION_RESULTS = "list_evaluation_results"
RUN_EVALUATION = "run_evaluation"
GET_OPERATION = "get_operation"

RejectHandler = Callable[[Any, str], None]
"""`on_reject(obj, reason)`: receives a listed object that cannot be placed, and why."""


class PageCounts(NamedTuple):
    """Conversations one listing page held: listed, outside the window, without traces, fetched in full."""

    listed: int
    outside: int
    without_traces: int
    hydrated: int


class Verdict(enum.Enum):
    ACCEPT = "accept"
    DUPLICATE = "duplicate"
    OUTSIDE = "outside"
    REJECT = "reject"


class ListingJudge:
    """Judges a listed conversation by its first listing; names outside go unkept (a server may list all)."""

    def __init__(self, window: TimeWindow):
        self.window = window
        self._seen: set[str] = set()

    def judge(self, item: Any) -> tuple[Verdict, str]:
        if not isinstance(item, dict):
            return Verdict.REJECT, "listed conversation is not a JSON object"
        name = name_of(item)
        if not name:
            return Verdict.REJECT, "conversation has no name"
        if name in self._seen:
            return Verdict.DUPLICATE, ""
        start = item.get("startTime")
        if not isinstance(start, str):
            self._seen.add(name)
            return Verdict.REJECT, "conversation has no startTime"
        try:
            micros = parse_timestamp_micros(start)
        except ValueError as exc:
            self._seen.add(name)
            return Verdict.REJECT, f"unparseable startTime: {exc}"
        if not self.window.since_micros <= micros < self.window.until_micros:
            return Verdict.OUTSIDE, ""
        self._seen.add(name)
        return Verdict.ACCEPT, ""


# -- conversations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    """How an app's conversations are listed and fetched in full: the `CES_*` settings of it."""

    sources: tuple[str, ...] = ()
    page_size: int = 100
    max_empty_pages: int = DEFAULT_MAX_EMPTY_PAGES
    hydrate: str = "auto"
    """`auto`, `always` or `never`: which listed conversations `get_conversation` fetches."""

    @classmethod
    def from_settings(cls, settings: CesSettings) -> Listing:
        return cls(settings.sources, settings.page_size, settings.max_empty_pages, settings.hydrate)

    def fetches_in_full(self, untraced: bool) -> bool:
        """`auto`: a listing without traces; `always`: all, as Google's tooling does; `never`: none."""
        return self.hydrate == "always" or (self.hydrate == "auto" and untraced)


DEFAULT_LISTING = Listing()


def list_conversations_arguments(
    app: str, window: TimeWindow, listing: Listing = DEFAULT_LISTING
) -> dict[str, Any]:
    """The first page's arguments, every source named when none is set: no `source` would mean LIVE only."""
    return {
        "parent": app,
        "pageSize": listing.page_size,
        "filter": window.aip160_filter(),
        "sources": list(listing.sources or KNOWN_SOURCES),
    }


def iter_conversation_records(
    client: ToolClient,
    app: str,
    window: TimeWindow,
    listing: Listing = DEFAULT_LISTING,
    *,
    hydrate_workers: int = 4,
    on_page: Callable[[PageCounts], None] | None = None,
) -> Iterator[ApiRecord]:
    """One app's conversation records in `window`, in replay order: each page, then the
    get_conversation of each conversation it first listed that `listing` wants in full. A paging
    thread runs one page ahead (memory: two pages), its hydrations on `hydrate_workers` threads."""
    judge = ListingJudge(window)
    arguments = list_conversations_arguments(app, window, listing)
    pool = DaemonPool(hydrate_workers, "ces-hydrate")

    def hydrate(name: str) -> ApiRecord:
        return fetch_record(client, GET_CONVERSATION, {"name": name}, keep=not_found)

    def with_hydrations(page: ApiRecord) -> tuple[ApiRecord, PageCounts, list[Future[ApiRecord]]]:
        items = page_items(page.result, "conversations", LIST_CONVERSATIONS)
        verdicts = [judge.judge(item)[0] for item in items]
        accepted = [item for item, verdict in zip(items, verdicts, strict=True) if verdict is Verdict.ACCEPT]
        untraced = [lacks_traces(item) for item in accepted]
        hydrations = [
            pool.submit(hydrate, item["name"])
            for item, bare in zip(accepted, untraced, strict=True)
            if listing.fetches_in_full(bare)
        ]
        counts = PageCounts(len(items), verdicts.count(Verdict.OUTSIDE), sum(untraced), len(hydrations))
        return page, counts, hydrations

    pages = iter_page_records(
        client,
        LIST_CONVERSATIONS,
        arguments,
        items_key="conversations",
        max_empty_pages=listing.max_empty_pages,
    )
    fetched = prefetched((with_hydrations(page) for page in pages), on_drop=_cancel_hydrations)
    try:
        for page, listed, futures in fetched:
            try:
                if on_page is not None:
                    on_page(listed)
                yield page
                for future in futures:
                    yield future.result()
            finally:
                _cancel_hydrations((page, listed, futures))
    finally:
        fetched.close()


def _cancel_hydrations(item: tuple[ApiRecord, PageCounts, list[Future[ApiRecord]]]) -> None:
    for future in item[2]:
        future.cancel()


def resolve_conversations(
    records: Iterable[ApiRecord | Mapping[str, Any]],
    window: TimeWindow,
    *,
    on_reject: RejectHandler | None = None,
    view: Callable[[Any], Any] | None = None,
) -> Iterator[Any]:
    """The window's conversations from records in fetch order: each once, in order of first
    listing, fetched in full when it was. An object that cannot be placed, or that CES deleted
    between its listing and its fetch, goes to `on_reject`, or raises CesDataError (as a
    get_conversation out of order does); the judge sees `view(item)`."""
    judge = ListingJudge(window)
    pending: dict[str, Any] = {}
    for raw in records:
        record = as_record(raw)
        if record.tool == LIST_CONVERSATIONS:
            yield from pending.values()
            pending = {}
            for item in page_items(record.result, "conversations", LIST_CONVERSATIONS):
                listed = item if view is None else view(item)
                verdict, reason = judge.judge(listed)
                if verdict is Verdict.ACCEPT:
                    pending[listed["name"]] = item
                elif verdict is Verdict.REJECT and on_reject is not None:
                    on_reject(item, reason)
                elif verdict is Verdict.REJECT:
                    raise CesDataError(f"conversation {name_of(item) or '(no name)'}: {reason}")
        elif record.tool == GET_CONVERSATION:
            name = record.arguments.get("name")
            if not isinstance(name, str) or name not in pending:
                raise CesDataError(
                    f"get_conversation record for {name!r} does not follow the list_conversations page "
                    "that listed it inside the window; records must stay in fetch order"
                )
            refused = None if record.refused is None else f"{GET_CONVERSATION} refused: {record.refused}"
            if refused is None:
                pending[name] = record.result
            elif on_reject is None:
                raise CesDataError(f"conversation {name}: {refused}")
            else:  # deleted between its listing and its fetch
                on_reject(pending.pop(name), refused)
        else:
            logger.debug("ignoring a %s record among conversation records", record.tool)
    yield from pending.values()


# -- evaluation runs, results and operations -----------------------------------------------------


def iter_evaluation_run_records(client: ToolClient, app: str, *, page_size: int = 100) -> Iterator[ApiRecord]:
    """An app's run pages, newest first: a discovery stops once it reaches the runs it knows."""
    arguments = {"parent": app, "pageSize": page_size, "orderBy": "create_time desc"}
    return iter_page_records(client, LIST_EVALUATION_RUNS, arguments, items_key="evaluationRuns")


def iter_evaluation_result_records(
    client: ToolClient, app: str, run_name: str, *, page_size: int = 100
) -> Iterator[ApiRecord]:
    """One run's result pages: results live under evaluations, so `evaluations/-`, filtered by run."""
    arguments = {
        "parent": f"{app}/evaluations/-",
        "pageSize": page_size,
        "filter": f'evaluation_run = "{run_name}"',
    }
    return iter_page_records(client, LIST_EVALUATION_RESULTS, arguments, items_key="evaluationResults")


def run_evaluation(
    client: ToolClient,
    app: str,
    *,
    evaluations: Sequence[str] | None = None,
    evaluation_dataset: str | None = None,
    display_name: str | None = None,
    app_version: str | None = None,
) -> dict[str, Any]:
    """Start an evaluation run (never sent twice: each call starts one); returns the Operation."""
    optional = {
        "evaluations": list(evaluations) if evaluations is not None else None,
        "evaluationDataset": evaluation_dataset,
        "displayName": display_name,
        "appVersion": app_version,
    }
    arguments = {"app": app, **{key: value for key, value in optional.items() if value is not None}}
    return client.call_tool(RUN_EVALUATION, arguments, idempotent=False)


def get_operation(client: ToolClient, name: str) -> dict[str, Any]:
    return client.call_tool(GET_OPERATION, {"name": name})


def get_evaluation_run(client: ToolClient, name: str) -> dict[str, Any]:
    return client.call_tool(GET_EVALUATION_RUN, {"name": name})
