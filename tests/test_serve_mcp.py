"""`ces-pipeline mcp`: the warehouse as read-only MCP tools, through the official SDK client over
stdio and Streamable HTTP, on the sample warehouse (tests/trend_samples.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import duckdb
import httpx
import pytest
import trend_samples as samples
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from test_warehouse import write_partition

from pipelines import __version__
from pipelines.cli import main
from pipelines.config import ServeSettings
from pipelines.ingest.load import load_conversation_partitions, partition_files
from pipelines.lake.store import Lake
from pipelines.serve.reader import AnswerError, WarehouseReader
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import named_queries

ROOT = Path(__file__).resolve().parents[1]
TOOLS = {
    "list_queries",
    "run_query",
    "describe_warehouse",
    "get_conversation_trace",
    "explain_evaluation_result",
    "what_changed",
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return samples.build_warehouse(tmp_path_factory.mktemp("serve"))[1]


def server_env(warehouse: Warehouse, **caps: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CES_", "DAGSTER_"))}
    return {**env, "CES_WAREHOUSE": warehouse.path, "PYTHONPATH": str(ROOT), **caps}


def stdio(warehouse: Warehouse, **caps: str) -> StdioServerParameters:
    """`ces-pipeline mcp` as a client's `mcpServers` entry starts it."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "pipelines.cli", "mcp"], env=server_env(warehouse, **caps)
    )


def cli_json(warehouse: Warehouse, name: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> Any:
    """What `ces-pipeline query NAME --format json` prints."""
    monkeypatch.setenv("CES_WAREHOUSE", warehouse.path)
    capsys.readouterr()
    assert main(["query", name, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


async def _calls(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    async with Client(server) as client:
        info = client.server_info
        assert (info.name, info.version) == ("ces-pipeline-warehouse", __version__)
        tools = (await client.list_tools()).tools
        return tools, [await client.call_tool(name, arguments) for name, arguments in calls]


def call(server: Any, *calls: tuple[str, dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    return anyio.run(_calls, server, list(calls))


def test_every_named_query_answers_as_the_cli_does(warehouse: Warehouse, capsys, monkeypatch) -> None:
    queries = [query.name for query in named_queries()]
    uncapped = {"CES_SERVE_MAX_ROWS": "100000", "CES_SERVE_MAX_BYTES": "100000000"}
    tools, answers = call(
        stdio(warehouse, **uncapped),
        ("list_queries", {}),
        *[("run_query", {"name": name}) for name in queries],
    )
    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        assert tool.annotations.read_only_hint and not tool.annotations.destructive_hint, tool.name
        assert tool.input_schema["type"] == "object" and tool.output_schema, tool.name
        assert len(tool.description) > 60, tool.name
    listed = answers[0].structured_content["queries"]
    assert [query["name"] for query in listed] == queries
    assert all(query["description"] for query in listed)
    regressions = next(query for query in listed if query["name"] == "evaluation_regressions")
    assert {"name": "max_score_drop", "type": "DOUBLE", "default": 0.1, "required": False}.items() <= next(
        p for p in regressions["parameters"] if p["name"] == "max_score_drop"
    ).items()
    for name, answer in zip(queries, answers[1:], strict=True):
        assert not answer.is_error, (name, answer.content)
        found = answer.structured_content
        assert found["rows"] == cli_json(warehouse, name, capsys, monkeypatch), name
        assert found["row_count"] == len(found["rows"]) and not found["truncated"], name
        # anomalies needs weeks of history (tests/test_anomalies.py); the sample holds two days
        assert found["rows"] or name == "anomalies", f"{name}: the sample warehouse answers every query"
        assert answer.content[0].text.splitlines()[0] == " | ".join(found["columns"]), name


def test_parameters_are_typed_and_bad_questions_are_tool_errors(warehouse: Warehouse) -> None:
    _, answers = call(
        stdio(warehouse),
        ("run_query", {"name": "tool_errors", "params": {"app": "support", "since": "2026-11-02"}}),
        (
            "run_query",
            {"name": "evaluation_regressions", "params": {"max_score_drop": 1, "status": "regressed"}},
        ),
        ("run_query", {"name": "no_such_query"}),
        ("run_query", {"name": "tool_errors", "params": {"since": "yesterday"}}),
        ("run_query", {"name": "tool_errors", "params": {"colour": "red"}}),
        (
            "run_query",
            {"name": "component_latency", "params": {"component": "x'; DROP TABLE conversations; --"}},
        ),
        ("run_query", {"name": "tool_errors", "params": {"app": "no-such-app"}}),
        ("get_conversation_trace", {"name": "projects/p/locations/us/apps/a/conversations/none"}),
        ("explain_evaluation_result", {"name": "no-such-result"}),
        ("run_query", {"name": "daily_volume"}),
    )
    narrowed, typed, unknown, bad_date, bad_name, injected, no_app, missing, no_result, after = answers
    assert narrowed.structured_content["params"] == {
        "app": "support",
        "since": "2026-11-02",
        "until": "9999-12-31",
    }
    assert narrowed.structured_content["rows"]
    assert not typed.is_error and typed.structured_content["params"]["max_score_drop"] == 1.0
    assert (
        unknown.is_error
        and "no query named 'no_such_query'; known queries: agent_transfer_flows" in unknown.content[0].text
    )
    assert (
        bad_date.is_error
        and "parameter since expects a date (YYYY-MM-DD), got 'yesterday'" in bad_date.content[0].text
    )
    assert (
        bad_name.is_error
        and "has no parameter colour; it takes: app, since, until" in bad_name.content[0].text
    )
    assert not injected.is_error and injected.structured_content["rows"] == []  # bound, never spliced
    assert no_app.is_error and "no app 'no-such-app' in the warehouse; it holds: " in no_app.content[0].text
    assert (
        missing.is_error
        and "no conversation 'projects/p/locations/us/apps/a/conversations/none'" in missing.content[0].text
    )
    assert no_result.is_error and "no evaluation result 'no-such-result'" in no_result.content[0].text
    assert not after.is_error and after.structured_content["rows"]  # the tables are all still there


def test_answers_are_capped_and_say_so(warehouse: Warehouse) -> None:
    rows_capped = WarehouseReader(warehouse, ServeSettings(max_rows=3))
    bytes_capped = WarehouseReader(warehouse, ServeSettings(max_bytes=600))
    from pipelines.serve.server import build_server

    _, (by_rows,) = call(build_server(rows_capped), ("run_query", {"name": "span_latency"}))
    _, (by_bytes, trace) = call(
        build_server(bytes_capped),
        ("run_query", {"name": "span_latency"}),
        ("get_conversation_trace", {"name": samples.all_conversations()[0][1]["name"]}),
    )
    assert by_rows.structured_content["row_count"] == 3 and by_rows.structured_content["truncated"]
    assert "only the first 3 rows (CES_SERVE_MAX_ROWS)" in by_rows.structured_content["note"]
    assert by_rows.content[0].text.endswith(
        "(only the first 3 rows (CES_SERVE_MAX_ROWS): narrow the question)"
    )
    assert 0 < by_bytes.structured_content["row_count"] < 10 and by_bytes.structured_content["truncated"]
    assert len(json.dumps(by_bytes.structured_content["rows"])) <= 600
    assert "reached 600 bytes (CES_SERVE_MAX_BYTES)" in by_bytes.structured_content["note"]
    assert trace.is_error and "alone is over 600 bytes (CES_SERVE_MAX_BYTES)" in trace.content[0].text


def test_a_slow_question_is_interrupted_at_the_time_cap(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    with warehouse.connect() as conn:
        conn.execute("CREATE TABLE t AS SELECT 1 AS v")
    reader = WarehouseReader(warehouse, ServeSettings(timeout_seconds=0.3))
    started = time.monotonic()
    with (
        pytest.raises(AnswerError, match=r"stopped after 0\.3 s \(CES_SERVE_TIMEOUT_SECONDS\)"),
        reader.connect() as conn,
    ):
        conn.execute("SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3").fetchall()
    assert time.monotonic() - started < 5
    with reader.connect() as conn:  # the next question runs as usual
        assert conn.execute("SELECT v FROM t").fetchall() == [(1,)]
    with pytest.raises(duckdb.Error), reader.connect() as conn:  # the connection is read-only
        conn.execute("DELETE FROM t")


def test_a_conversation_trace_nests_messages_chunks_tool_calls_and_spans(warehouse: Warehouse) -> None:
    source = next(conv for _, conv in samples.all_conversations() if len(conv["turns"]) >= 2)
    given_chunks = [c for turn in source["turns"] for m in turn["messages"] for c in m["chunks"]]

    def source_spans(span: dict) -> Iterator[dict]:
        yield span
        for child in span.get("childSpans", []):
            yield from source_spans(child)

    spans = [span for turn in source["turns"] for span in source_spans(turn["rootSpan"])]
    reader = WarehouseReader(warehouse, ServeSettings())
    from pipelines.serve.server import build_server

    conversation_id = source["name"].rsplit("/", 1)[1]
    _, (trace, second, by_id) = call(
        build_server(reader),
        ("get_conversation_trace", {"name": source["name"]}),
        ("get_conversation_trace", {"name": source["name"], "first_turn": 1}),
        ("get_conversation_trace", {"name": conversation_id}),
    )
    found = trace.structured_content
    assert found["conversation"]["conversation_name"] == source["name"]
    assert [turn["turn_index"] for turn in found["turns"]] == list(range(len(source["turns"])))
    assert found["next_turn"] is None and found["note"] is None
    for turn, given in zip(found["turns"], source["turns"], strict=True):
        assert [m["role"] for m in turn["messages"]] == [m["role"] for m in given["messages"]]
    chunks = [c for turn in found["turns"] for m in turn["messages"] for c in m["chunks"]]
    calls = [c["tool_call"] for c in chunks if c["chunk_type"] == "tool_call"]
    responses = [c["tool_response"] for c in chunks if c["chunk_type"] == "tool_response"]
    assert [c["tool"] for c in calls] == [c["toolCall"].get("tool") for c in given_chunks if "toolCall" in c]
    assert [c["args"] for c in calls] == [c["toolCall"].get("args") for c in given_chunks if "toolCall" in c]
    assert [r["response"] for r in responses] == [
        c["toolResponse"]["response"] for c in given_chunks if "toolResponse" in c
    ]  # JSON columns as JSON values, not text
    assert calls and responses

    def walk(nodes: list[dict]) -> Iterator[dict]:
        for node in nodes:
            yield node
            yield from walk(node["children"])

    tree = [span for turn in found["turns"] for span in walk(turn["spans"])]
    assert sorted(s["name"] for s in tree) == sorted(s["name"] for s in spans)
    assert sorted(round(s["duration_seconds"], 6) for s in tree) == sorted(
        round(samples.seconds(s["duration"]), 6) for s in spans
    )
    assert all(len(turn["spans"]) == 1 for turn in found["turns"])  # one root per turn
    assert [t["turn_index"] for t in second.structured_content["turns"]] == list(
        range(1, len(source["turns"]))
    )
    assert by_id.is_error  # both sample apps have a conversation of this id
    assert (
        f"conversation id {conversation_id!r} is ambiguous: give the full resource name"
        in by_id.content[0].text
    )


def test_an_evaluation_result_is_explained_with_its_replayed_conversation(warehouse: Warehouse) -> None:
    failed = samples.evaluation_results()[samples.SUPPORT][1]
    reader = WarehouseReader(warehouse, ServeSettings())
    from pipelines.serve.server import build_server

    passed = samples.evaluation_results()[samples.SUPPORT][0]
    _, (explained, fine) = call(
        build_server(reader),
        ("explain_evaluation_result", {"name": failed["name"]}),
        ("explain_evaluation_result", {"name": passed["name"]}),
    )
    assert fine.structured_content["result"]["evaluation_status"] == "PASS"
    assert fine.structured_content["failures"] == []
    found = explained.structured_content
    assert found["result"]["evaluation_status"] == "FAIL" and found["result"]["app_version_label"] == "v3"
    with warehouse.connect(read_only=True) as conn:
        failures = conn.execute(
            "SELECT failure_kind, failure, turn_index FROM evaluation_failures "
            "WHERE evaluation_result_name = ?",
            [failed["name"]],
        ).fetchall()
        replayed = conn.execute(
            "SELECT DISTINCT conversation_name FROM evaluation_turn_replays WHERE evaluation_result_name = ?",
            [failed["name"]],
        ).fetchall()
        slowest = conn.execute(
            "SELECT name, duration_seconds FROM spans WHERE conversation_name = ? AND depth > 0 "
            "ORDER BY duration_seconds DESC LIMIT 5",
            [replayed[0][0]],
        ).fetchall()
    assert sorted((f["failure_kind"], f["failure"], f["turn_index"]) for f in found["failures"]) == sorted(
        failures
    )
    assert [c["conversation_name"] for c in found["conversations"]] == sorted(name for (name,) in replayed)
    first = found["conversations"][0]
    assert first["loaded"] and [(s["name"], s["duration_seconds"]) for s in first["slowest_spans"]] == slowest
    assert any(call["tool"] for call in first["erroring_tool_calls"])
    assert {score["metric"] for score in found["scores"]} >= {"hallucination"}


def test_http_serves_the_same_answers_on_the_port_it_prints(warehouse: Warehouse) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "mcp", "--http", "--port", "0"],
        env=server_env(warehouse),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        tools, (over_http,) = call(url, ("run_query", {"name": "daily_volume", "params": {"app": "sales"}}))
        rebound = httpx.post(  # a page of another site reaching the port by DNS rebinding
            url,
            headers={"Host": "attacker.example", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
        _, (over_stdio,) = call(
            stdio(warehouse), ("run_query", {"name": "daily_volume", "params": {"app": "sales"}})
        )
    finally:
        server.terminate()  # SIGTERM, as a service manager stops it
        _, stderr = server.communicate(timeout=10)
    assert server.returncode == 0 and stderr.strip().endswith("the MCP server stopped")
    assert {tool.name for tool in tools} == TOOLS
    assert (
        over_http.structured_content == over_stdio.structured_content and over_http.structured_content["rows"]
    )
    assert rebound.status_code == 421 and "daily_volume" not in rebound.text


def test_a_load_in_progress_is_neither_waited_for_nor_seen_half_done(tmp_path: Path) -> None:
    """The server keeps answering while a load has written every row inside its transaction, and
    shows none of them until the load has finished."""
    lake = Lake(str(tmp_path / "lake"))
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    partitions = {key: items for key, items in samples.conversations().items()}
    for (app, day), items in partitions.items():
        write_partition(lake, app, day, items)
    load_conversation_partitions(lake, warehouse, [key for key in partitions if key[0] == samples.SALES])
    support = [key for key in partitions if key[0] == samples.SUPPORT]
    expected = sum(len(partitions[key]) for key in support)
    written, release, done = threading.Event(), threading.Event(), threading.Event()

    def load() -> None:
        with warehouse.conversation_load() as replacing:
            replacing([partition_files(lake, app, day) for app, day in support])
            written.set()
            release.wait(60)
        done.set()

    question = ("run_query", {"name": "conversation_volume", "params": {"by": "app"}})
    sales_conversation = partitions[next(key for key in partitions if key[0] == samples.SALES)][0]["name"]

    async def ask() -> tuple[list[float], list[dict], list[dict]]:
        async with Client(stdio(warehouse)) as client:
            await client.call_tool(*question)  # started and warm before the load begins
            loader = threading.Thread(target=load)
            loader.start()
            assert await anyio.to_thread.run_sync(written.wait, 60)
            during, seconds = [], []
            for _ in range(5):
                started = time.monotonic()
                answer = await client.call_tool(*question)
                seconds.append(time.monotonic() - started)
                during.append(answer.structured_content)
            # an id alone names it while only one app holds that id
            trace = await client.call_tool(
                "get_conversation_trace", {"name": sales_conversation.rsplit("/", 1)[1]}
            )
            assert trace.structured_content["conversation"]["conversation_name"] == sales_conversation
            release.set()
            await anyio.to_thread.run_sync(loader.join, 60)
            assert done.is_set()
            after = (await client.call_tool(*question)).structured_content
            return seconds, during, [after]

    seconds, during, (after,) = anyio.run(ask)

    def support_conversations(answer: dict) -> int:
        return sum(row["conversations"] for row in answer["rows"] if row["value"] == samples.SUPPORT)

    assert max(seconds) < 10  # answered while the load holds its lock, which it keeps until after
    assert [support_conversations(answer) for answer in during] == [0] * 5  # nothing of the load yet
    assert support_conversations(after) == expected > 0  # all of it once it finished


def test_a_port_in_use_is_one_line_and_exit_2(warehouse: Warehouse, capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["mcp", "--http", "--port", str(port)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err == f"error: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_what_changed_sets_a_day_against_the_one_before_with_the_latest_runs_regressions(
    warehouse: Warehouse, capsys, monkeypatch
) -> None:
    (day_one, day_two), app = samples.DAYS, samples.SUPPORT
    window = {"since": str(day_two), "until": str(day_two + timedelta(days=1))}
    _, (answer, unknown) = call(
        stdio(warehouse),
        ("what_changed", {"app": "support", **window}),
        ("what_changed", {"app": "suport", **window}),
    )
    assert not answer.is_error, answer.content
    assert unknown.is_error and unknown.content[0].text.endswith(
        f"no app 'suport' in the warehouse; it holds: {samples.SALES}, {samples.SUPPORT}"
    )
    found = answer.structured_content
    assert (found["app"], found["compared_with"]) == (app, {"since": str(day_one), "until": str(day_two)})
    held = samples.conversations()
    metrics = {metric["metric"]: metric for metric in found["metrics"]}
    volume = metrics["conversations"]
    assert (volume["current"], volume["previous"]) == (len(held[(app, day_two)]), len(held[(app, day_one)]))
    assert volume["change"] == volume["current"] - volume["previous"]
    assert found["anomalies"] == []  # two days are no baseline
    assert {cost["model"] for cost in found["costs"]} <= set(samples.MODELS)
    monkeypatch.setenv("CES_WAREHOUSE", warehouse.path)
    capsys.readouterr()
    assert (
        main(
            [
                "query",
                "evaluation_regressions",
                "--format",
                "json",
                "--param",
                f"app={app}",
                "--param",
                "status=regressed",
            ]
        )
        == 0
    )
    assert found["evaluation_regressions"] == json.loads(capsys.readouterr().out)


def test_a_long_trace_comes_in_parts_each_within_the_byte_cap(warehouse: Warehouse) -> None:
    """A cap between one and all turns' size: the answer takes the turns that fit (its JSON at
    most the cap before the note), says where to go on, and the next part starts there."""
    from pipelines.serve.lookups import conversation_trace

    source = max((conv for _, conv in samples.all_conversations()), key=lambda conv: len(conv["turns"]))
    whole_reader = WarehouseReader(warehouse, ServeSettings())
    with whole_reader.connect() as conn:
        whole = conversation_trace(whole_reader, conn, source["name"], 0)
    assert len(whole["turns"]) >= 3
    two = {**whole, "turns": whole["turns"][:2]}
    cap = len(json.dumps(two))  # room for exactly the first two turns
    reader = WarehouseReader(warehouse, ServeSettings(max_bytes=cap))
    with reader.connect() as conn:
        first = conversation_trace(reader, conn, source["name"], 0)
        rest = conversation_trace(reader, conn, source["name"], first["next_turn"])
    assert [turn["turn_index"] for turn in first["turns"]] == [0, 1] and first["next_turn"] == 2
    assert len(json.dumps({**first, "next_turn": None, "note": None})) <= cap
    assert "ask again with first_turn=2" in first["note"]
    assert rest["turns"][0] == whole["turns"][2]
