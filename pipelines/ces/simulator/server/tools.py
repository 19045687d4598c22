"""The CES tools the simulator serves: argument checking and the answer of each tool.

Every handler takes the tool's `arguments` object and returns the response message as a JSON
object (what becomes `structuredContent`), or raises `ToolError` for a tool-level failure
(NOT_FOUND, INVALID_ARGUMENT), which the protocol layer reports as an `isError` result.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pipelines import resource_names
from pipelines.ces.simulator.corpus.catalog import app_catalog
from pipelines.ces.simulator.corpus.conversations import conversation_of
from pipelines.ces.simulator.corpus.evaluation_json import (
    evaluation_results_json,
    evaluation_run_json,
    operation_json,
)
from pipelines.ces.simulator.corpus.evaluations import RUN_STEPS, RunRequest, requested_run
from pipelines.ces.simulator.corpus.headers import (
    SOURCES,
    conversation_header,
    resolve_conversation_name,
    visible,
)
from pipelines.ces.simulator.corpus.protojson import NANOS_PER_MICRO, timestamp
from pipelines.ces.simulator.server.config import SimulatorConfig
from pipelines.ces.simulator.server.conversation_listing import ConversationListing, ConversationQuery
from pipelines.ces.simulator.server.errors import ToolError
from pipelines.ces.simulator.server.evaluation_registry import EvaluationRegistry
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.simulator.server.filters import (
    StartTimeRange,
    parse_equality_filter,
    parse_start_time_filter,
)
from pipelines.ces.simulator.server.paging import decode_page_token, encode_page_token, fingerprint, page_size
from pipelines.ces.simulator.server.shapes import Shaper
from pipelines.ces.simulator.server.state import SimulatorState
from pipelines.ces.simulator.server.tool_schemas import TOOL_DEFINITIONS

_ORDER_BY = re.compile(r"\s*(name|create_time|update_time)(?:\s+(asc|desc))?\s*")
_RUN_FILTER_FIELDS = {"state": "state", "evaluation_type": "evaluationType"}
"""Filterable fields of list_evaluation_runs and their JSON names."""
_RESULT_FILTER_FIELDS = frozenset({"evaluation_run"})

Handler = Callable[[dict[str, Any]], dict[str, Any]]
_EXPIRED_TOKEN = "page token expired: list again from the first page (simulated fault)"


def _string(arguments: dict[str, Any], field: str, *, required: bool = False) -> str:
    value = arguments.get(field)
    if value is None or value == "":
        if required:
            raise ToolError("INVALID_ARGUMENT", f"{field} is required")
        return ""
    if not isinstance(value, str):
        raise ToolError("INVALID_ARGUMENT", f"{field} must be a string, got {type(value).__name__}")
    return value


def _sources(arguments: dict[str, Any]) -> frozenset[str]:
    """`sources` wins over the deprecated `source`; neither (or only SOURCE_UNSPECIFIED) means all."""
    requested = arguments.get("sources")
    if requested in (None, []):
        single = _string(arguments, "source")
        requested = [single] if single else []
    if not isinstance(requested, list):
        raise ToolError("INVALID_ARGUMENT", "sources must be a list of Source values")
    wanted = set()
    for source in requested:
        if source == "SOURCE_UNSPECIFIED":
            continue
        if source not in SOURCES:
            raise ToolError(
                "INVALID_ARGUMENT", f"invalid value {source!r} for Source; expected one of {SOURCES}"
            )
        wanted.add(source)
    return frozenset(wanted or SOURCES)


class ToolBox:
    """The simulator's tools: their listing and their dispatch."""

    def __init__(self, config: SimulatorConfig, state: SimulatorState):
        self.config = config
        self.scale = config.scale
        self.state = state
        self.listing = ConversationListing(config)
        self.faults = config.faults if isinstance(config.faults, SimulatedFaults) else None
        """The data-shaped faults (`--faults`), when the simulator has any."""
        self.shaper = Shaper(self.faults) if self.faults else None
        self.registry = EvaluationRegistry(config, state)
        self._handlers: dict[str, Handler] = {
            "list_conversations": self.list_conversations,
            "get_conversation": self.get_conversation,
            "list_evaluation_runs": self.list_evaluation_runs,
            "get_evaluation_run": self.get_evaluation_run,
            "run_evaluation": self.run_evaluation,
            "get_operation": self.get_operation,
            "list_evaluation_results": self.list_evaluation_results,
        }

    def definitions(self) -> list[dict[str, Any]]:
        """The `tools/list` entries; without structured content no tool may declare an outputSchema."""
        if self.config.structured_content:
            return list(TOOL_DEFINITIONS)
        return [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in TOOL_DEFINITIONS]

    def handler(self, name: str) -> Handler | None:
        return self._handlers.get(name)

    # ------------------------------------------------------------------------------ helpers
    def _app(self, name: str, field: str) -> int:
        if not resource_names.APP.fullmatch(name):
            raise ToolError(
                "INVALID_ARGUMENT",
                f"{field} {name!r} is not an app name (projects/{{p}}/locations/{{l}}/apps/{{app}})",
            )
        app = self.scale.app_index(name)
        if app is None:
            raise ToolError("NOT_FOUND", f"app {name} not found")
        return app

    def _page(
        self, arguments: dict[str, Any], items: list[dict[str, Any]], field: str, request_fingerprint: str
    ) -> dict[str, Any]:
        """One page of an already ordered list (evaluation runs and results)."""
        size = page_size(arguments.get("pageSize"), self.config.page_size_default, self.config.page_size_max)
        token = _string(arguments, "pageToken")
        if token and self.faults and self.faults.listing_fault(field, arguments) == "expire-token":
            raise ToolError("INVALID_ARGUMENT", _EXPIRED_TOKEN)
        position = decode_page_token(token, request_fingerprint)[0] if token else 0
        out: dict[str, Any] = {}
        if items[position : position + size]:
            out[field] = items[position : position + size]
        if position + size < len(items):
            out["nextPageToken"] = encode_page_token(request_fingerprint, position + size, 0)
        return out

    # ------------------------------------------------------------------------------ conversations
    def list_conversations(self, arguments: dict[str, Any]) -> dict[str, Any]:
        parent = _string(arguments, "parent", required=True)
        app = self._app(parent, "parent")
        size = page_size(arguments.get("pageSize"), self.config.page_size_default, self.config.page_size_max)
        filter_text = _string(arguments, "filter")
        window = parse_start_time_filter(filter_text)
        sources = _sources(arguments)
        if (
            self.faults is not None
            and not arguments.get("sources")
            and not arguments.get("source")
            and self.faults.chosen("live-by-default", parent)
        ):
            sources = frozenset({"LIVE"})
        request_fingerprint = fingerprint("list_conversations", parent, filter_text.strip(), sorted(sources))
        token = _string(arguments, "pageToken")
        fault = self.faults.listing_fault("list_conversations", arguments) if self.faults else None
        if fault == "expire-token":
            raise ToolError("INVALID_ARGUMENT", _EXPIRED_TOKEN)
        position, page_number = decode_page_token(token, request_fingerprint) if token else (0, 0)
        if self.faults is not None and self.faults.chosen("empty-forever", request_fingerprint):
            return {"nextPageToken": encode_page_token(request_fingerprint, position, page_number + 1)}
        if self.faults is not None and self.faults.chosen("ignore-filter", request_fingerprint):
            window = StartTimeRange()
        query = ConversationQuery(app, window, sources, request_fingerprint)
        page = self.listing.page(query, position, page_number, size, self.registry.made_conversations(app))
        conversations = [self._served(item, listed=True) for item in page.conversations]
        if self.faults is not None and fault == "dup":
            conversations = self.faults.with_duplicate(request_fingerprint, page_number, conversations)
        out: dict[str, Any] = {}
        if conversations:
            out["conversations"] = conversations
        if self.faults is not None and fault == "repeat-page":
            again = self.faults.variant(token or request_fingerprint)  # this page once more, new token
            out["nextPageToken"] = encode_page_token(
                request_fingerprint, position, page_number, variant=again
            )
        elif page.next_position is not None:
            out["nextPageToken"] = encode_page_token(request_fingerprint, page.next_position, page_number + 1)
        if self.faults is not None:
            self.faults.remember_page(request_fingerprint, page_number, conversations)
        return out

    def _served(self, conversation: dict[str, Any], *, listed: bool) -> dict[str, Any]:
        """A conversation as served: in the shapes the faults ask for, then rewritten by their
        bad-input hook, if any."""
        if self.faults is None or self.shaper is None:
            return conversation
        conversation = self.shaper.conversation(conversation, listed=listed)
        return conversation if self.faults.corrupt is None else self.faults.corrupt(conversation)

    def _served_run(self, run: dict[str, Any]) -> dict[str, Any]:
        return run if self.shaper is None else self.shaper.run(run)

    def _served_operation(self, operation: dict[str, Any]) -> dict[str, Any]:
        return operation if self.shaper is None else self.shaper.operation(operation)

    def get_conversation(self, arguments: dict[str, Any]) -> dict[str, Any]:
        name = _string(arguments, "name", required=True)
        key = resolve_conversation_name(self.scale, name)
        header = (
            self.registry.made_conversation(name) if key is None else conversation_header(self.scale, key)
        )
        as_of = self.config.as_of_nanos
        if (
            header is None
            or not visible(self.scale, header, as_of)
            or (self.faults is not None and self.faults.chosen("deleted", name))
        ):
            raise ToolError("NOT_FOUND", f"conversation {name} not found")
        return self._served(conversation_of(self.scale, header, as_of), listed=False)

    # ------------------------------------------------------------------------------ evaluation runs
    def list_evaluation_runs(self, arguments: dict[str, Any]) -> dict[str, Any]:
        parent = _string(arguments, "parent", required=True)
        app = self._app(parent, "parent")
        filter_text = _string(arguments, "filter")
        wanted = parse_equality_filter(filter_text, frozenset(_RUN_FILTER_FIELDS))
        order_by = _string(arguments, "orderBy") or "update_time"
        order = _ORDER_BY.fullmatch(order_by)
        if order is None:
            raise ToolError(
                "INVALID_ARGUMENT",
                f"invalid orderBy {order_by!r}: use name, create_time or update_time, optionally desc",
            )
        catalog = app_catalog(self.scale, app)
        rows = []
        for plan in self.registry.runs(app):
            step = self.registry.current_step(plan)
            run = evaluation_run_json(plan, step, catalog)
            if all(run.get(_RUN_FILTER_FIELDS[field]) == value for field, value in wanted.items()):
                sort_key = {
                    "name": plan.name,
                    "create_time": plan.create_time,
                    "update_time": plan.update_time(step),
                }[order.group(1)]
                rows.append((sort_key, plan.name, self._served_run(run)))
        rows.sort(key=lambda row: (row[0], row[1]), reverse=order.group(2) == "desc")
        request_fingerprint = fingerprint(
            "list_evaluation_runs", parent, filter_text.strip(), order_by.strip()
        )
        return self._page(arguments, [run for _, _, run in rows], "evaluationRuns", request_fingerprint)

    def get_evaluation_run(self, arguments: dict[str, Any]) -> dict[str, Any]:
        name = _string(arguments, "name", required=True)
        plan = self.registry.run(name)
        if plan is None:
            raise ToolError("NOT_FOUND", f"evaluation run {name} not found")
        catalog = app_catalog(self.scale, plan.app_index)
        return self._served_run(evaluation_run_json(plan, self.registry.poll(plan), catalog))

    def run_evaluation(self, arguments: dict[str, Any]) -> dict[str, Any]:
        app_name = _string(arguments, "app", required=True)
        app = self._app(app_name, "app")
        catalog = app_catalog(self.scale, app)
        requested = arguments.get("evaluations") or []
        dataset_ref = _string(arguments, "evaluationDataset")
        if not isinstance(requested, list) or not all(isinstance(e, str) for e in requested):
            raise ToolError("INVALID_ARGUMENT", "evaluations must be a list of evaluation IDs")
        if bool(requested) == bool(dataset_ref):
            raise ToolError(
                "INVALID_ARGUMENT", "exactly one of evaluations and evaluationDataset must be set"
            )
        by_reference = {ref: e for e in catalog.evaluations for ref in (e.name, e.name.rsplit("/", 1)[-1])}
        missing = [ref for ref in requested if ref not in by_reference]
        if missing:
            raise ToolError("NOT_FOUND", f"evaluation {missing[0]} not found in {app_name}")
        dataset = None
        if dataset_ref:
            dataset = next(
                (d for d in catalog.datasets if dataset_ref in (d.name, d.name.rsplit("/", 1)[-1])), None
            )
            if dataset is None:
                raise ToolError("NOT_FOUND", f"evaluation dataset {dataset_ref} not found in {app_name}")
        version_ref = _string(arguments, "appVersion")
        version = next((v for v in catalog.versions if version_ref in (v[0], v[0].rsplit("/", 1)[-1])), None)
        if version_ref and version is None:
            raise ToolError("NOT_FOUND", f"app version {version_ref} not found in {app_name}")
        now = self.state.clock()
        now -= now % NANOS_PER_MICRO
        evaluations = (
            dataset.evaluations if dataset else tuple(dict.fromkeys(by_reference[r] for r in requested))
        )
        display_name = (
            _string(arguments, "displayName") or f"{app_name.rsplit('/', 1)[-1]} run - {timestamp(now)}"
        )
        plan = self.state.start_run(
            lambda sequence: requested_run(
                self.scale,
                RunRequest(
                    app_index=app,
                    sequence=sequence,
                    evaluations=evaluations,
                    dataset=dataset,
                    display_name=display_name,
                    app_version=version,
                    create_time=now,
                    length=RUN_STEPS * self.registry.step_nanos,
                ),
            )
        )
        return self._served_operation(operation_json(plan, plan.start_step))

    def get_operation(self, arguments: dict[str, Any]) -> dict[str, Any]:
        name = _string(arguments, "name", required=True)
        found = self.registry.operation(name)
        if found is None:
            raise ToolError("NOT_FOUND", f"operation {name} not found")
        return self._served_operation(operation_json(*found))

    # ------------------------------------------------------------------------------ evaluation results
    def list_evaluation_results(self, arguments: dict[str, Any]) -> dict[str, Any]:
        parent = _string(arguments, "parent", required=True)
        app_name, sep, evaluation_id = parent.rpartition("/evaluations/")
        if not sep or not evaluation_id or "/" in evaluation_id:
            raise ToolError(
                "INVALID_ARGUMENT",
                f"parent {parent!r} must be an evaluation name or {{app}}/evaluations/- for all",
            )
        app = self._app(app_name, "parent")
        catalog = app_catalog(self.scale, app)
        if evaluation_id != "-" and parent not in {e.name for e in catalog.evaluations}:
            raise ToolError("NOT_FOUND", f"evaluation {parent} not found")
        filter_text = _string(arguments, "filter")
        run_name = parse_equality_filter(filter_text, _RESULT_FILTER_FIELDS).get("evaluation_run")
        shape = self.shaper.result if self.shaper else lambda result: result
        replayed = self.registry.replayed(app)
        results = [
            shape(result)
            for plan in sorted(self.registry.runs(app), key=lambda p: (p.create_time, p.name))
            if run_name in (None, plan.name)
            for result in evaluation_results_json(plan, self.registry.current_step(plan), catalog, replayed)
            if evaluation_id == "-" or result["name"].startswith(parent + "/results/")
        ]
        request_fingerprint = fingerprint("list_evaluation_results", parent, filter_text.strip())
        return self._page(arguments, results, "evaluationResults", request_fingerprint)
