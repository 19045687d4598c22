"""A small warehouse of known conversations and evaluation runs for the view, query, report and
BI tests, and plain-Python expectations computed from the same JSON (never from the SQL).

The data covers every case the trend views handle: two apps, two days, every component (with
`TOOL:`/`AGENT:` prefixes and a lower-case one), LLM token attributes, tool errors, agent
transfers across turns and within one message, an open conversation, missing channel, language,
input types and entry agent, completed, running and errored evaluation runs.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from pipelines.ingest.evaluations import EvaluationObservation, load_evaluation_observation
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.store import Lake
from pipelines.protojson.timeparse import parse_timestamp_micros
from pipelines.warehouse.duck import Warehouse

SUPPORT = "projects/p1/locations/us/apps/support"
SALES = "projects/p1/locations/us/apps/sales"
APPS = (SUPPORT, SALES)
DAYS = (date(2026, 11, 1), date(2026, 11, 2))
MODELS = ("gemini-2.5-flash", "gemini-2.5-pro")
COMPONENTS = {
    "LLM": "LLM",
    "TOOL": "Tool",
    "CALLBACK": "Callback",
    "GUARDRAIL": "Guardrail",
    "TTS": "TTS",
    "VAD": "VAD",
    "AGENT": "Agent",
}


def quantile(values: Iterable[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (what `quantile_cont` computes)."""
    ordered = sorted(values)
    if not ordered:
        return None
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seconds(duration: str) -> float:
    return float(duration.removesuffix("s"))


def utc_day(stamp: str) -> date:
    return datetime.fromtimestamp(parse_timestamp_micros(stamp) / 1e6, UTC).date()


# -- conversations ------------------------------------------------------------------------------


def _span(name: str, start: datetime, length: float, attributes: dict | None = None, children=()) -> dict:
    span: dict[str, Any] = {
        "name": name,
        "startTime": _stamp(start),
        "endTime": _stamp(start + timedelta(seconds=length)),
        "duration": f"{length:.6f}s",
    }
    if attributes:
        span["attributes"] = attributes
    if children:
        span["childSpans"] = list(children)
    return span


def conversation(app: str, day: date, index: int, rng: random.Random) -> dict[str, Any]:
    """One conversation of `app` starting on `day`; index picks the special cases."""
    start = datetime(day.year, day.month, day.day, 1 + index * 3, 7, 0, tzinfo=UTC)
    if index == 0 and day == DAYS[0]:
        start = datetime(day.year, day.month, day.day, 23, 59, 30, tzinfo=UTC)  # runs past midnight
    agents = [f"{app}/agents/root", f"{app}/agents/billing", f"{app}/agents/returns"]
    tool = f"{app}/tools/lookup_order"
    toolset = f"{app}/toolsets/crm"
    name = f"{app}/conversations/{day:%Y%m%d}-{index}"
    audio = index % 2 == 1
    turns = []
    clock = start
    for turn_index in range(1 + (index + day.day) % 3):
        clock += timedelta(seconds=2 + rng.random())
        llm_length = round(0.3 + rng.random() * 2, 6)
        model = MODELS[(index + turn_index) % 2]
        children = [
            _span(
                "LLM",
                clock,
                llm_length,
                {
                    "agent": "Root",
                    "model": model,
                    "input token count": 500 + rng.randrange(1000),
                    "output token count": 10 + rng.randrange(200),
                    "time to first chunk (ms)": 100 + rng.randrange(900),
                },
            ),
            _span("Guardrail", clock, round(0.01 + rng.random() / 10, 6), {"name": "PII", "agent": "Root"}),
            _span("Callback", clock, round(rng.random() / 50, 6), {"stage": "before_model"}),
        ]
        chunks: list[dict[str, Any]] = [{"text": "let me check"}]
        if turn_index != 1:
            error = rng.random() < 0.4
            uses_toolset = rng.random() < 0.5
            identity = (
                {"toolsetTool": {"toolset": toolset, "toolId": "get_customer"}}
                if uses_toolset
                else {"tool": tool, "displayName": "Lookup order"}
            )
            call_id = f"call-{turn_index}"
            chunks.append({"toolCall": {"id": call_id, **identity, "args": {"order": index}}})
            chunks.append(
                {
                    "toolResponse": {
                        "id": call_id,
                        **identity,
                        "response": {"error": "timeout"} if error else {"output": {"ok": True}},
                    }
                }
            )
            tool_length = round(0.05 + rng.random(), 6)
            inner = _span("TOOL:lookup_order", clock, round(tool_length / 2, 6), {"http status": 200})
            children.append(_span("Tool", clock, tool_length, {"name": "lookup_order"}, [inner]))
        if turn_index == 0 and index % 2 == 0:
            target = agents[1]
            chunks.append({"agentTransfer": {"targetAgent": target, "displayName": "Billing"}})
            nested = _span("LLM", clock, 0.5, {"model": MODELS[1], "input token count": 100.0})
            children.append(_span("AGENT:billing", clock, 0.75, {"agent": "Billing"}, [nested]))
        if turn_index == 1:
            # two transfers in one message: billing → returns → root
            chunks.append({"agentTransfer": {"targetAgent": agents[2], "displayName": "Returns"}})
            chunks.append({"agentTransfer": {"targetAgent": agents[0]}})
            children.append(_span("tool:search", clock, 0.2))
            children.append(_span("Planner", clock, 0.1))
        if audio:
            children.append(_span("VAD", clock, round(0.1 + rng.random() / 5, 6)))
            children.append(_span("TTS", clock, round(0.2 + rng.random() / 2, 6)))
        root_length = round(2 + rng.random() * 3, 6)
        root_attributes = {"perceived latency (ms)": 300 + rng.randrange(3000), "input types": ["text"]}
        if index == 1 and turn_index == 0:
            root_attributes = {}  # a turn without perceived latency
        turns.append(
            {
                "messages": [
                    {"role": "user", "eventTime": _stamp(clock), "chunks": [{"text": "hello"}]},
                    {"role": "agent", "eventTime": _stamp(clock), "chunks": chunks},
                ],
                "rootSpan": _span("Turn", clock, root_length, root_attributes, children),
            }
        )
        clock += timedelta(seconds=root_length)
    item: dict[str, Any] = {
        "name": name,
        "startTime": _stamp(start),
        "turnCount": len(turns),
        "source": ("LIVE", "SIMULATOR", "EVAL", "LIVE")[index % 4],
        "channelType": "AUDIO" if audio else "TEXT",
        "inputTypes": ["INPUT_TYPE_AUDIO", "INPUT_TYPE_TEXT"] if audio else ["INPUT_TYPE_TEXT"],
        "entryAgent": agents[0],
        "languageCode": ("en-US", "de-DE", "en-US")[index % 3],
        "turns": turns,
    }
    if not (index == 2 and day == DAYS[1]):
        item["endTime"] = _stamp(clock + timedelta(seconds=5))
    if index == 3:
        for key in ("channelType", "languageCode", "inputTypes", "entryAgent", "source"):
            del item[key]
    return item


def conversations() -> dict[tuple[str, date], list[dict[str, Any]]]:
    """The conversations of each (app, day) partition."""
    rng = random.Random(20261101)
    return {
        (app, day): [conversation(app, day, index, rng) for index in range(4 + APPS.index(app))]
        for app in APPS
        for day in DAYS
    }


# -- evaluation runs ------------------------------------------------------------------------------


def _latency(p50: float, p90: float, p99: float, calls: int) -> dict[str, Any]:
    return {"p50Latency": f"{p50}s", "p90Latency": f"{p90}s", "p99Latency": f"{p99}s", "callCount": calls}


def evaluation_run(
    app: str, number: int, *, created: str, state: str, version: int, summaries, latencies
) -> dict:
    run: dict[str, Any] = {
        "name": f"{app}/evaluationRuns/run-{number}",
        "displayName": f"Nightly #{number}",
        "createTime": created,
        "appVersion": f"{app}/versions/{version}",
        "appVersionDisplayName": f"v{version}",
        "evaluationType": "GOLDEN",
        "state": state,
        "progress": {"totalCount": 10, "passedCount": 5, "completedCount": 8},
        "evaluationRunSummaries": {f"{app}/evaluations/{key}": value for key, value in summaries.items()},
    }
    if latencies:
        tools, models, guardrails, callbacks = latencies
        run["latencyReport"] = {
            "toolLatencies": [
                {"tool": f"{app}/tools/{tool}", "toolDisplayName": tool.title(), "latencyMetrics": metrics}
                for tool, metrics in tools.items()
            ],
            "llmCallLatencies": [
                {"model": model, "latencyMetrics": metrics} for model, metrics in models.items()
            ],
            "guardrailLatencies": [
                {"guardrail": f"{app}/guardrails/{name}", "latencyMetrics": metrics}
                for name, metrics in guardrails.items()
            ],
            "callbackLatencies": [
                {"stage": stage, "latencyMetrics": metrics} for stage, metrics in callbacks.items()
            ],
            "sessionCount": 4,
        }
    return run


def evaluation_runs() -> dict[str, list[dict[str, Any]]]:
    """The runs of each app: support has three completed runs (the last one regresses), a
    running one and an errored one; sales has a single completed run (nothing to compare)."""
    support = [
        evaluation_run(
            SUPPORT,
            1,
            created="2026-11-01T03:00:00Z",
            state="COMPLETED",
            version=1,
            summaries={"refund": {"passedCount": 4, "failedCount": 1}, "greeting": {"passedCount": 2}},
            latencies=(
                {"lookup": _latency(0.1, 0.5, 1.0, 10)},
                {"gemini-2.5-flash": _latency(1.0, 2.0, 3.0, 20)},
                {"pii": _latency(0.05, 0.1, 0.2, 8)},
                {"beforeModel": _latency(0.01, 0.02, 0.03, 5)},
            ),
        ),
        evaluation_run(
            SUPPORT,
            2,
            created="2026-11-01T15:00:00Z",
            state="COMPLETED",
            version=2,
            summaries={
                "refund": {"passedCount": 4, "failedCount": 1},
                "greeting": {"passedCount": 2},
                "transfer": {"passedCount": 1, "failedCount": 1},
            },
            latencies=(
                {"lookup": _latency(0.1, 0.5, 1.0, 10), "cancel": _latency(0.3, 0.6, 0.9, 4)},
                {"gemini-2.5-flash": _latency(1.0, 2.0, 3.0, 20)},
                {"pii": _latency(0.05, 0.1, 0.2, 8)},
                {"beforeModel": _latency(0.01, 0.02, 0.03, 5)},
            ),
        ),
        evaluation_run(
            SUPPORT,
            3,
            created="2026-11-02T03:00:00Z",
            state="COMPLETED",
            version=3,
            summaries={
                "refund": {"passedCount": 2, "failedCount": 2, "errorCount": 1},
                "greeting": {"passedCount": 2},
                "transfer": {"passedCount": 2},
                "escalation": {"passedCount": 1},
            },
            latencies=(
                {"lookup": _latency(0.1, 0.6, 1.05, 12)},
                {"gemini-2.5-flash": _latency(0.8, 1.5, 3.0, 25)},
                {"pii": _latency(0.05, 0.104, 0.2, 8)},
                {"beforeModel": _latency(0.01, 0.02, 0.03, 5)},
            ),
        ),
        evaluation_run(
            SUPPORT,
            4,
            created="2026-11-02T09:00:00Z",
            state="RUNNING",
            version=3,
            summaries={"refund": {"failedCount": 1}},
            latencies=None,
        ),
        evaluation_run(
            SUPPORT,
            5,
            created="2026-11-02T10:00:00Z",
            state="ERROR",
            version=3,
            summaries={},
            latencies=None,
        ),
    ]
    sales = [
        evaluation_run(
            SALES,
            1,
            created="2026-11-02T05:00:00Z",
            state="COMPLETED",
            version=1,
            summaries={"quote": {"passedCount": 1, "failedCount": 3}},
            latencies=({"price": _latency(0.2, 0.4, 0.8, 6)}, {}, {}, {}),
        )
    ]
    return {SUPPORT: support, SALES: sales}


REFUNDED = "Your refund is on its way."
UNCONFIRMED = "The response asks for the order instead of confirming the refund."


def evaluation_results() -> dict[str, list[dict[str, Any]]]:
    """A failing golden result of support's run 3: its first turn replayed the second
    conversation of the first day, called the wrong tool, transferred to the wrong agent, did
    not confirm the refund and hallucinated; run 2's passed."""
    conversation = f"{SUPPORT}/conversations/{DAYS[0]:%Y%m%d}-1"
    result = {
        "name": f"{SUPPORT}/evaluations/refund/results/r1",
        "evaluationRun": f"{SUPPORT}/evaluationRuns/run-3",
        "evaluationStatus": "FAIL",
        "executionState": "COMPLETED",
        "goldenResult": {
            "turnReplayResults": [
                {
                    "conversation": conversation,
                    "turnLatency": "2.5s",
                    "expectationOutcome": [
                        {
                            "expectation": {"toolCall": {"tool": f"{SUPPORT}/tools/refund", "args": {}}},
                            "observedToolCall": {"tool": f"{SUPPORT}/tools/lookup_order", "args": {}},
                            "outcome": "FAIL",
                        },
                        {
                            "expectation": {"agentTransfer": {"targetAgent": f"{SUPPORT}/agents/billing"}},
                            "observedAgentTransfer": {"targetAgent": f"{SUPPORT}/agents/sales"},
                            "outcome": "FAIL",
                        },
                        {
                            "expectation": {
                                "agentResponse": {"role": "agent", "chunks": [{"text": REFUNDED}]}
                            },
                            "observedAgentResponse": {"role": "agent", "chunks": [{"text": "Which order?"}]},
                            "semanticSimilarityResult": {
                                "score": 1,
                                "label": "Different",
                                "explanation": UNCONFIRMED,
                                "outcome": "FAIL",
                            },
                            "outcome": "FAIL",
                        },
                    ],
                    "hallucinationResult": {"score": 1, "label": "Hallucination"},
                }
            ]
        },
    }
    passed = {  # run 2's result of the same evaluation: no hallucination, a quicker turn
        "name": f"{SUPPORT}/evaluations/refund/results/r0",
        "evaluationRun": f"{SUPPORT}/evaluationRuns/run-2",
        "evaluationStatus": "PASS",
        "executionState": "COMPLETED",
        "goldenResult": {
            "turnReplayResults": [
                {"conversation": conversation, "turnLatency": "1s", "hallucinationResult": {"label": "None"}}
            ]
        },
    }
    return {SUPPORT: [passed, result]}


def run_seconds(run: dict[str, Any]) -> float:
    """How long a sample run took: its number times 10 minutes, plus a quarter second."""
    return int(run["name"].rsplit("-", 1)[1]) * 600 + 0.25


def evaluation_operations() -> dict[str, list[dict[str, Any]]]:
    """The operation of each final sample run, as get_operation returns it once the run ended."""
    out: dict[str, list[dict[str, Any]]] = {}
    for app, runs in evaluation_runs().items():
        for run in runs:
            if run["state"] not in ("COMPLETED", "ERROR", "CANCELLED"):
                continue
            created = datetime.fromisoformat(run["createTime"])
            metadata = {
                "@type": "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationOperationMetadata",
                "evaluationRun": run["name"],
                "createTime": run["createTime"],
                "endTime": _stamp(created + timedelta(seconds=run_seconds(run))),
                "verb": "create",
            }
            operation = {"name": f"{run['name']}-operation", "metadata": metadata, "done": True}
            if run["state"] == "ERROR":
                operation["error"] = {"code": 13, "message": "evaluation failed"}
            out.setdefault(app, []).append(operation)
    return out


# -- building the warehouse through the real load path ------------------------------------------


REJECTED = {
    "name": f"{SUPPORT}/conversations/rejected",
    "startTime": "2026-11-01T09:00:00Z",
    "turnCount": "many",
}
"""A conversation the sample warehouse holds only as a `rejects` row (its turn count is no number)."""


def build_warehouse(
    root: Path,
    warehouse: Warehouse | None = None,
    *,
    evaluations_first: bool = False,
    evaluations: bool = True,
) -> tuple[Lake, Warehouse]:
    """Flatten → Parquet → `load_conversation_partitions`, and `load_evaluation_observation`
    (into `root/warehouse.duckdb` unless another warehouse is given), the evaluations after the
    conversations unless `evaluations_first`, or none (`evaluations` False)."""
    from test_warehouse import write_partition

    lake = Lake(str(root / "lake"))
    warehouse = warehouse or Warehouse(str(root / "warehouse.duckdb"))
    partitions = conversations()
    for (app, day), items in partitions.items():
        write_partition(lake, app, day, [*items, *([REJECTED] if (app, day) == (SUPPORT, DAYS[0]) else [])])
    if not evaluations_first:
        load_conversation_partitions(lake, warehouse, list(partitions))  # one load, as one run's
    observed = parse_timestamp_micros("2026-11-03T00:00:00Z")
    for app, runs in evaluation_runs().items() if evaluations else ():
        results = evaluation_results().get(app, [])
        operations = [(operation, observed) for operation in evaluation_operations().get(app, [])]
        observation = EvaluationObservation(
            runs=[(run, observed) for run in runs], results=results, operations=operations
        )
        load_evaluation_observation(warehouse, app, observation, date(2026, 11, 3))
    if evaluations_first:
        load_conversation_partitions(lake, warehouse, list(partitions))
    return lake, warehouse


# -- flattened views of the input, for the expectations -----------------------------------------


def all_conversations() -> list[tuple[str, dict[str, Any]]]:
    return [(app, item) for (app, _), items in conversations().items() for item in items]


def component(span: dict[str, Any], is_root: bool) -> str:
    if is_root:
        return "Turn"
    return COMPONENTS.get(span["name"].split(":", 1)[0].strip().upper(), "Other")


def spans() -> list[dict[str, Any]]:
    """Every span with its app, day (of the conversation), component and root flag."""
    found = []
    for app, item in all_conversations():
        day = utc_day(item["startTime"])
        for turn in item["turns"]:
            stack = [(turn["rootSpan"], True)]
            while stack:
                span, is_root = stack.pop()
                found.append(
                    {
                        "app": app,
                        "day": day,
                        "span": span,
                        "name": span["name"],
                        "component": component(span, is_root),
                        "seconds": seconds(span["duration"]),
                        "attributes": span.get("attributes", {}),
                    }
                )
                stack.extend((child, False) for child in span.get("childSpans", []))
    return found


def tool_events() -> list[dict[str, Any]]:
    """Every toolCall and toolResponse chunk with app, day, tool key and error flag."""
    found = []
    for app, item in all_conversations():
        day = utc_day(item["startTime"])
        for turn in item["turns"]:
            for message in turn["messages"]:
                for chunk in message["chunks"]:
                    for kind in ("toolCall", "toolResponse"):
                        if kind in chunk:
                            body = chunk[kind]
                            key = body.get("tool") or "{toolset}/{toolId}".format(**body["toolsetTool"])
                            found.append(
                                {
                                    "app": app,
                                    "day": day,
                                    "tool": key,
                                    "display_name": body.get("displayName") or key.rsplit("/", 1)[-1],
                                    "kind": kind,
                                    "error": kind == "toolResponse" and "error" in body["response"],
                                }
                            )
    return found


def transfers() -> list[dict[str, Any]]:
    """Every agent transfer in conversation order with the agent it left."""
    found = []
    for app, item in all_conversations():
        day = utc_day(item["startTime"])
        previous = item.get("entryAgent")
        for turn in item["turns"]:
            for message in turn["messages"]:
                for chunk in message["chunks"]:
                    if "agentTransfer" in chunk:
                        target = chunk["agentTransfer"]["targetAgent"]
                        found.append(
                            {
                                "app": app,
                                "day": day,
                                "conversation": item["name"],
                                "from": previous,
                                "to": target,
                                "to_display_name": chunk["agentTransfer"].get("displayName"),
                            }
                        )
                        previous = target
    return found


def grouped(rows: Iterable[dict[str, Any]], *keys: str) -> dict[tuple, list[dict[str, Any]]]:
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[key] for key in keys)].append(row)
    return dict(groups)
