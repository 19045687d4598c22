"""Evaluation runs that move: polling progression, run_evaluation and its operation, results listing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from simulator_fixtures import (
    McpHttp,
    parse_conversation,
    parse_evaluation_run,
    parse_operation,
    strip_unpublished,
)

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus.evaluations import seeded_runs
from pipelines.protojson.timeparse import parse_timestamp_nanos

SCALE = SimulatorScale(apps=1, days=1, conversations_per_day=5, evaluation_runs_per_app=5)


@pytest.fixture
def served() -> Iterator[tuple[McpHttp, str]]:
    # runs move per poll here: the clock's step (the other way they move) is out of reach
    config = SimulatorConfig(scale=SCALE, response_mode="json", run_step_seconds=3600)
    with running_simulator(config) as handle:
        caller = McpHttp(handle.url)
        yield caller, handle.apps[0]
        caller.close()


def _run_named(caller: McpHttp, app: str, state: str) -> dict[str, Any]:
    runs = caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app)
    return next(run for run in runs if run["state"] == state)


def _finished(run: dict[str, Any]) -> int:
    return sum(run["progress"].get(f, 0) for f in ("completedCount", "errorCount", "cancelledCount"))


def test_a_queued_run_advances_on_each_poll_until_completed(served: tuple[McpHttp, str]) -> None:
    caller, app = served
    name = _run_named(caller, app, "QUEUED")["name"]
    polls = [caller.call("get_evaluation_run", name=name) for _ in range(6)]
    states = [run["state"] for run in polls]
    assert states[0] == "QUEUED" and "RUNNING" in states and states[-1] == states[-2] == "COMPLETED"
    assert states.index("COMPLETED") <= 5
    finished = [_finished(run) for run in polls]
    assert finished == sorted(finished) and finished[-1] == polls[-1]["progress"]["totalCount"]
    for run in polls:
        parse_evaluation_run(run)
    # Listings show what the latest poll showed.
    listed = next(
        r for r in caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app) if r["name"] == name
    )
    assert listed == polls[-1]
    results = caller.all_items(
        "list_evaluation_results",
        "evaluationResults",
        parent=f"{app}/evaluations/-",
        filter=f'evaluation_run = "{name}"',
    )
    assert sorted(r["name"] for r in results) == sorted(polls[-1]["evaluationResults"])
    assert all(r["executionState"] in ("COMPLETED", "ERROR") for r in results)


def test_a_finished_run_stays_put(served: tuple[McpHttp, str]) -> None:
    caller, app = served
    name = _run_named(caller, app, "CANCELLED")["name"]
    first, second = (caller.call("get_evaluation_run", name=name) for _ in range(2))
    assert first == second and first["progress"]["cancelledCount"] > 0


def test_run_evaluation_starts_a_new_run_each_time(served: tuple[McpHttp, str]) -> None:
    caller, app = served
    before = {r["name"] for r in caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app)}
    operation = caller.call(
        "run_evaluation",
        app=app,
        evaluations=["order-status", f"{app}/evaluations/refund-happy-path"],
        displayName="smoke",
    )
    parse_operation(operation)
    assert operation["name"].startswith("projects/sim-project/locations/us/operations/")
    assert "done" not in operation and operation["metadata"]["@type"].endswith(
        "RunEvaluationOperationMetadata"
    )
    run_name = operation["metadata"]["evaluationRun"]
    assert run_name not in before

    # the operation follows its run: not done (and never moving it) until the run is final
    assert caller.call("get_operation", name=operation["name"]) == operation
    run = caller.call("get_evaluation_run", name=run_name)
    assert (
        run["state"] == "QUEUED" and run["displayName"] == "smoke" and run["operation"] == operation["name"]
    )
    while run["state"] not in ("COMPLETED", "ERROR", "CANCELLED"):
        assert "done" not in caller.call("get_operation", name=operation["name"])
        run = caller.call("get_evaluation_run", name=run_name)
    done = caller.call("get_operation", name=operation["name"])
    assert done["done"] is True and run["state"] == "COMPLETED"
    assert done["response"] == {
        "@type": "type.googleapis.com/google.cloud.ces.v1beta.RunEvaluationResponse",
        "evaluationRun": run_name,
    }
    assert done["metadata"]["createTime"] == run["createTime"]
    assert done["metadata"]["endTime"] > run["createTime"]
    parse_operation(done)
    assert run["evaluations"] == [f"{app}/evaluations/order-status", f"{app}/evaluations/refund-happy-path"]
    after = {r["name"] for r in caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app)}
    assert after == before | {run_name}

    again = caller.call("run_evaluation", app=app, evaluationDataset="golden-regression", appVersion="2")
    assert again["metadata"]["evaluationRun"] not in after and again["name"] != operation["name"]
    dataset_run = caller.call("get_evaluation_run", name=again["metadata"]["evaluationRun"])
    assert dataset_run["evaluationDataset"] == f"{app}/evaluationDatasets/golden-regression"
    assert dataset_run["appVersion"] == f"{app}/versions/2" and dataset_run["appVersionDisplayName"] == "v2.0"
    assert "evaluations" not in dataset_run


def _spans(span: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield span
    for child in span.get("childSpans", []):
        yield from _spans(child)


_KINDS = {"LLM": "LLM", "TOOL": "Tool", "USER_CALLBACK": "Callback", "GUARDRAIL": "Guardrail", None: "AGENT"}
"""The span a SpanLatency of each type stands for (a sub-agent's: `AGENT:{id}`, of no type)."""


def _span_latencies(reported: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(_KINDS[s.get("type")], s["startTime"], s["endTime"]) for s in reported["spanLatencies"]}


def _recorded_spans(turns: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(kind, start, end) of each span of these turns a SpanLatency stands for."""
    spans = (
        (span["name"].split(":")[0], span["startTime"], span["endTime"])
        for turn in turns
        for span in _spans(turn["rootSpan"])
    )
    return {span for span in spans if span[0] in _KINDS.values()}


def _assert_took_what_its_turn_took(replay: dict[str, Any], turn: dict[str, Any]) -> None:
    """A replayed golden turn reports the latencies its conversation's turn records: the turn's,
    each tool call's (the tools the agent called) and each span's."""
    root = turn["rootSpan"]
    assert replay["turnLatency"] == root["duration"]
    assert _span_latencies(replay) == _recorded_spans([turn])
    calls = [(c["displayName"], c["startTime"]) for c in replay.get("toolCallLatencies", [])]
    made = [
        (span["attributes"]["name"], span["startTime"])
        for span in root.get("childSpans", [])
        if span["name"] == "Tool"
    ]
    assert calls == made


def _replayed(result: dict[str, Any]) -> list[str]:
    """The conversations a result names: its golden turns', or its scenario's."""
    turns = result.get("goldenResult", {}).get("turnReplayResults", [])
    scenario = result.get("scenarioResult", {}).get("conversation")
    return list(dict.fromkeys([turn["conversation"] for turn in turns] + ([scenario] if scenario else [])))


def test_a_started_run_makes_the_conversations_its_results_replay(served: tuple[McpHttp, str]) -> None:
    """A run started with run_evaluation makes an EVAL conversation for each result it completes,
    from when the result began, with the calls the result saw; `list_conversations` lists it and
    `get_conversation` serves it once the result is complete. The simulator named conversations
    it never served: `evaluate`, then `ingest`, never loaded a started run's conversations."""
    caller, app = served

    def made() -> dict[str, dict[str, Any]]:
        listed = caller.all_items("list_conversations", "conversations", parent=app, source="EVAL")
        return {c["name"]: c for c in listed if not c["name"].split("/")[-1].startswith("20261101-")}

    operation = caller.call("run_evaluation", app=app, evaluations=["order-status", "angry-customer"])
    run_name = operation["metadata"]["evaluationRun"]
    run = caller.call("get_evaluation_run", name=run_name)
    seen: list[int] = []
    while run["state"] != "COMPLETED":
        seen.append(len(made()))
        run = caller.call("get_evaluation_run", name=run_name)
    results = caller.all_items(
        "list_evaluation_results",
        "evaluationResults",
        parent=f"{app}/evaluations/-",
        filter=f'evaluation_run = "{run_name}"',
    )
    completed = [result for result in results if result["executionState"] == "COMPLETED"]
    named = {name: result for result in completed for name in _replayed(result)}
    assert len(named) == len(completed) > 0  # one conversation each, of its own
    assert set(made()) == set(named)
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] < len(named)  # each once its result is complete
    for name, result in named.items():
        conversation = caller.call("get_conversation", name=name)
        began = parse_timestamp_nanos(conversation["startTime"])
        assert conversation["source"] == "EVAL" and "endTime" in conversation
        parse_conversation(strip_unpublished(conversation)[0])  # as the official schema has it
        assert began >= parse_timestamp_nanos(run["createTime"])
        assert all(parse_timestamp_nanos(t) >= began for t in _event_times(result)), name
        called = [_tools_called(turn) for turn in conversation["turns"]]
        for index, turn in enumerate(result.get("goldenResult", {}).get("turnReplayResults", [])):
            checked = [
                outcome["expectation"]["toolCall"]["displayName"]
                for outcome in turn["expectationOutcome"]
                if "toolCall" in outcome.get("expectation", {})
            ]
            if index < len(called):
                assert checked == called[index][:1], (name, index)
                _assert_took_what_its_turn_took(turn, conversation["turns"][index])
    day = min(named).split("/")[-1][:8]
    before = f"{day[:4]}-{day[4:6]}-{day[6:]}T00:00:00Z"
    earlier = caller.all_items(
        "list_conversations", "conversations", parent=app, filter=f'start_time < "{before}"'
    )
    assert not set(named) & {c["name"] for c in earlier}  # listed in their own day's window alone


@pytest.mark.parametrize(
    ("arguments", "status"),
    [
        ({"evaluations": ["order-status"], "evaluationDataset": "golden-regression"}, "INVALID_ARGUMENT"),
        ({}, "INVALID_ARGUMENT"),
        ({"evaluations": ["no-such-evaluation"]}, "NOT_FOUND"),
        ({"evaluationDataset": "no-such-dataset"}, "NOT_FOUND"),
        ({"evaluations": ["order-status"], "appVersion": "versions/99"}, "NOT_FOUND"),
    ],
)
def test_run_evaluation_refuses_bad_requests(
    served: tuple[McpHttp, str], arguments: dict, status: str
) -> None:
    caller, app = served
    assert caller.call_error("run_evaluation", app=app, **arguments).startswith(f"{status}:")


def test_evaluation_run_listing_filters_and_orders(served: tuple[McpHttp, str]) -> None:
    caller, app = served
    completed = caller.all_items(
        "list_evaluation_runs", "evaluationRuns", parent=app, filter='state = "COMPLETED"'
    )
    assert completed and all(r["state"] == "COMPLETED" for r in completed)
    by_name = caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app, orderBy="name desc")
    assert [r["name"] for r in by_name] == sorted((r["name"] for r in by_name), reverse=True)
    paged = list(caller.pages("list_evaluation_runs", parent=app, pageSize=2))
    assert len(paged) == 3 and "nextPageToken" not in paged[-1]
    assert caller.call_error("list_evaluation_runs", parent=app, filter="display_name = x").startswith(
        "INVALID_ARGUMENT:"
    )
    assert caller.call_error("get_evaluation_run", name=f"{app}/evaluationRuns/none").startswith("NOT_FOUND:")
    assert caller.call_error(
        "get_operation", name="projects/sim-project/locations/us/operations/x"
    ).startswith("NOT_FOUND:")


def test_each_apps_newest_seeded_run_reruns_its_last_completed_one_with_a_regression() -> None:
    from pipelines.ces.simulator.corpus.evaluations import RUN_STEPS, seeded_runs

    scale = SimulatorScale(apps=2, days=1, conversations_per_day=1)  # 6 runs per app
    for app_index in range(2):
        *earlier, newest = seeded_runs(scale, app_index)
        done = [run for run in earlier if run.final_state == "COMPLETED" and run.start_step == RUN_STEPS]
        base = done[-1]
        assert newest.final_state == "COMPLETED" and newest.start_step == RUN_STEPS
        assert (newest.evaluations, newest.dataset) == (base.evaluations, base.dataset)
        failing = {r.evaluation for r in newest.results} - {
            r.evaluation for r in newest.results if r.outcome != "FAIL"
        }
        assert any(r.evaluation in failing and r.outcome == "PASS" for r in base.results)
        assert {run.final_state for run in earlier} >= {"COMPLETED", "ERROR", "CANCELLED"}


def _event_times(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from [item] if key == "eventTime" else _event_times(item)
    elif isinstance(value, list):
        for item in value:
            yield from _event_times(item)


def _tools_called(turn: dict[str, Any]) -> list[str]:
    """The display names of the tools a conversation's turn called, in order."""
    return [
        chunk["toolCall"]["displayName"]
        for message in turn["messages"]
        if message["role"] == "agent"
        for chunk in message["chunks"]
        if "toolCall" in chunk
    ]


@pytest.mark.parametrize(
    ("days", "conversations_per_day", "served", "predating"),
    [(4, 24, 6, 0), (5, 24, 9, 1), (1, 1, 0, 0)],
    ids=["eval-conversations", "one-predating-turns", "none"],
)
def test_a_result_replays_a_conversation_its_run_made(
    days: int, conversations_per_day: int, served: int, predating: int
) -> None:
    """A run makes the conversations it evaluates: each result names an EVAL conversation that
    started after its run was created, within a day of the result, whose calls are those the
    result saw (a replayed turn checks the first tool its conversation's turn called, or none; a
    scenario expects the first two its conversation called), and its replay's events are not
    earlier than that start; where no EVAL conversation started then, a name the server does
    not know (as the real service's results may). The pipeline looks for a run's conversations
    on the days from its creation on: one picked from any day was counted as not loaded, and the
    tools a loaded one called were not those its result had checked. A named conversation that
    predates turns (top-level messages alone) says no turn's calls: listing results that named
    one failed."""
    scale = SimulatorScale(
        apps=1, days=days, conversations_per_day=conversations_per_day, evaluation_runs_per_app=6
    )
    with running_simulator(SimulatorConfig(scale=scale)) as handle:
        caller = McpHttp(handle.url)
        app = handle.apps[0]
        created = {
            run["name"]: parse_timestamp_nanos(run["createTime"])
            for run in caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app)
        }
        named: dict[str, int] = {}
        missing, without_turns = set(), set()
        for result in caller.all_items(
            "list_evaluation_results", "evaluationResults", parent=f"{app}/evaluations/-"
        ):
            replays = result.get("goldenResult", {}).get("turnReplayResults", [])
            scenario = [result["scenarioResult"]["conversation"]] if "scenarioResult" in result else []
            for name in {turn["conversation"] for turn in replays} | set(scenario):
                if "/conversations/eval-" in name:
                    assert "NOT_FOUND" in caller.call_error("get_conversation", name=name)
                    missing.add(name)
                    continue
                conversation = caller.call("get_conversation", name=name)
                called = [_tools_called(turn) for turn in conversation.get("turns", [])]
                if "turns" not in conversation:
                    without_turns.add(name)
                for index, turn in enumerate(replays):
                    checked = [
                        outcome["expectation"]["toolCall"]["displayName"]
                        for outcome in turn["expectationOutcome"]
                        if "toolCall" in outcome.get("expectation", {})
                    ]
                    observed = [
                        outcome["observedToolCall"]["displayName"]
                        for outcome in turn["expectationOutcome"]
                        if "observedToolCall" in outcome
                    ]
                    if index < len(called):
                        assert checked == observed == called[index][:1], (result["name"], index)
                        _assert_took_what_its_turn_took(turn, conversation["turns"][index])
                if scenario and called:  # one that predates turns says no turn's calls
                    expected = [
                        outcome["expectation"]["toolExpectation"]["expectedToolCall"]["displayName"]
                        for outcome in result["scenarioResult"]["expectationOutcomes"]
                        if "toolExpectation" in outcome.get("expectation", {})
                    ]
                    assert expected == list(dict.fromkeys(t for turn in called for t in turn))[:2], result[
                        "name"
                    ]
                    # and its latencies are those its conversation records
                    reported = result["scenarioResult"]
                    assert _span_latencies(reported) == _recorded_spans(conversation["turns"])
                    assert [c["startTime"] for c in reported.get("toolCallLatencies", [])] == [
                        span["startTime"]
                        for turn in conversation["turns"]
                        for span in turn["rootSpan"].get("childSpans", [])
                        if span["name"] == "Tool"
                    ]
                began = parse_timestamp_nanos(conversation["startTime"])
                run_created = created[result["evaluationRun"]]
                assert run_created <= began < run_created + 2 * 86_400 * 10**9, (result["name"], name)
                assert all(parse_timestamp_nanos(t) >= began for t in _event_times(result)), result["name"]
                named[name] = began
        caller.close()
    # the distinct conversations named: a few a day of the runs' days, or none and only missing ones
    assert (len(named), bool(missing), len(without_turns)) == (served, not served, predating)


def test_a_started_run_ends_with_the_clock_for_a_client_polling_only_its_operation() -> None:
    """The reference's flow after run_evaluation: poll get_operation until done. The run moves
    with the server's clock, not only when someone polls it, and no time it reports lies past
    the instant its clock ended it."""
    config = SimulatorConfig(scale=SCALE, response_mode="json", run_step_seconds=0.2)
    with running_simulator(config) as handle:
        caller, app = McpHttp(handle.url), handle.apps[0]
        try:
            operation = caller.call("run_evaluation", app=app, evaluations=["order-status"])
            assert "done" not in operation
            deadline = time.monotonic() + 10
            while "done" not in operation and time.monotonic() < deadline:
                time.sleep(0.1)
                operation = caller.call("get_operation", name=operation["name"])
            seen_done = time.time_ns()
            run = caller.call("get_evaluation_run", name=operation["metadata"]["evaluationRun"])
            results = [
                result
                for result in caller.all_items(
                    "list_evaluation_results", "evaluationResults", parent=f"{app}/evaluations/-"
                )
                if result["evaluationRun"] == run["name"]
            ]
        finally:
            caller.close()
    assert operation.get("done") is True and "error" not in operation
    assert run["state"] == "COMPLETED" and run["progress"]["totalCount"] == len(results) > 0
    parse_operation(operation)
    reported = [operation["metadata"]["endTime"], *(result["createTime"] for result in results)]
    assert max(parse_timestamp_nanos(instant) for instant in reported) <= seen_done


def test_a_seeded_run_is_there_once_the_servers_clock_reaches_its_creation() -> None:
    """With `--as-of`, a run created later is neither listed nor found, nor are its results or its
    operation; one created by then is."""
    plans = sorted(seeded_runs(SCALE, 0), key=lambda plan: plan.create_time)
    as_of = plans[2].create_time
    instant = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=as_of // 1000)
    with running_simulator(SimulatorConfig(scale=SCALE, response_mode="json", as_of=instant)) as handle:
        caller, app = McpHttp(handle.url), handle.apps[0]
        try:
            listed = caller.all_items("list_evaluation_runs", "evaluationRuns", parent=app)
            assert {run["name"] for run in listed} == {plan.name for plan in plans[:3]}
            later = plans[3]
            assert caller.call_error("get_evaluation_run", name=later.name).startswith("NOT_FOUND:")
            assert caller.call_error("get_operation", name=later.operation).startswith("NOT_FOUND:")
            assert caller.call("get_evaluation_run", name=plans[2].name)["name"] == plans[2].name
            results = caller.all_items(
                "list_evaluation_results", "evaluationResults", parent=f"{app}/evaluations/-"
            )
            assert {result["evaluationRun"] for result in results} <= {plan.name for plan in plans[:3]}
        finally:
            caller.close()
