"""Named queries: typed parameters declared in their headers, values checked against the input JSON."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from datetime import UTC, date, datetime

import duckdb
import pytest
import trend_samples as samples
from pytest import approx

from pipelines.cli import main
from pipelines.config import ServeSettings
from pipelines.serve.changes import what_changed
from pipelines.serve.reader import WarehouseReader
from pipelines.warehouse import part_views
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import (
    NamedQueryError,
    json_lines,
    jsonable,
    named_queries,
    named_query,
    parse_query,
    run_query,
)

NOV_1, NOV_2 = samples.DAYS


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return samples.build_warehouse(tmp_path_factory.mktemp("queries"))[1]


def query(warehouse: Warehouse, name: str, **params) -> list[dict]:
    columns, rows = run_query(warehouse, name, params)
    return [dict(zip(columns, row, strict=True)) for row in rows]


def by_key(found: list[dict], *keys: str) -> dict[tuple, dict]:
    keyed = {tuple(row[key] for key in keys): row for row in found}
    assert len(keyed) == len(found), f"{keys} is not the grain"
    return keyed


def test_every_query_has_a_description_and_declares_what_it_uses() -> None:
    queries = {q.name: q for q in named_queries()}
    assert {
        "daily_volume",
        "span_latency",
        "tool_errors",
        "token_usage",
        "agent_transfer_flows",
        "evaluation_pass_rates",
        "evaluation_latency",
        "evaluation_regressions",
        "component_latency",
        "conversation_volume",
    } <= set(queries)
    for q in queries.values():
        assert q.description, q.name
        assert all(p.description for p in q.parameters), q.name


def test_declarations_are_parsed_and_checked() -> None:
    parsed = parse_query(
        "sample",
        "-- What it does.\n"
        "-- param since DATE = 2026-01-01: first day\n"
        "-- param limit INTEGER: how many\n"
        "-- param by CHOICE(a|b) = a: split\n"
        "SELECT $since, $limit, $by, '$not_a_parameter' -- $nor_this\n",
    )
    since, limit, by = parsed.parameters
    assert (since.type, since.default, since.required) == ("DATE", date(2026, 1, 1), False)
    assert limit.required and by.choices == ("a", "b")
    assert parsed.bind({"limit": "3"}) == {"since": date(2026, 1, 1), "limit": 3, "by": "a"}
    with pytest.raises(NamedQueryError, match="needs --param limit"):
        parsed.bind({})
    with pytest.raises(NamedQueryError, match="expects an integer, got 'many'"):
        parsed.bind({"limit": "many"})
    with pytest.raises(NamedQueryError, match="expects one of a, b, got 'c'"):
        parsed.bind({"limit": "1", "by": "c"})
    with pytest.raises(NamedQueryError, match="has no parameter until"):
        parsed.bind({"limit": "1", "until": "2026-01-01"})
    for until in ("2026-11-01", "2026-11-05"):  # the window [since, until) holds no day
        with pytest.raises(
            NamedQueryError,
            match=rf"until \({until}\), the first day excluded, must be after since \(2026-11-05\)",
        ):
            named_query("daily_volume").bind({"since": "2026-11-05", "until": until})
    bound = named_query("daily_volume").bind({"since": "2026-11-05", "until": "2026-11-06"})
    assert (bound["since"], bound["until"]) == (date(2026, 11, 5), date(2026, 11, 6))
    with pytest.raises(NamedQueryError, match=r"uses undeclared \$app"):
        parse_query("bad", "-- Bad.\nSELECT $app\n")
    with pytest.raises(NamedQueryError, match="declares unused app"):
        parse_query("bad", "-- Bad.\n-- param app VARCHAR = NULL: an app\nSELECT 1\n")
    with pytest.raises(NamedQueryError, match="bad declaration"):
        parse_query("bad", "-- Bad.\n-- param app: no type\nSELECT $app\n")


class Recording:
    """A connection that records each statement run through it."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self.conn, self.statements = conn, []

    def execute(self, sql: str, *args):
        self.statements.append(sql)
        return self.conn.execute(sql, *args)

    def sql(self, sql: str):
        return self.conn.sql(sql)


def test_a_query_whose_rows_all_come_from_an_empty_table_is_answered_without_being_run(
    warehouse: Warehouse, tmp_path
) -> None:
    """A DuckLake plans a query over tables without rows slowly (a catalog lookup per column, on
    every query), so the evaluation queries, whose rows all come from evaluation_runs, give their
    columns alone while it holds none: what running them gives there, and they run once it has rows."""
    declared = [q for q in named_queries() if q.rows_of]
    assert {q.name for q in declared} == {q.name for q in named_queries() if q.name.startswith("evaluation_")}
    _, bare = samples.build_warehouse(tmp_path, evaluations=False)
    for source, runs in ((bare, False), (warehouse, True)):
        with source.connect(read_only=True) as conn:
            for q in declared:
                recording = Recording(conn)
                columns, cursor = q.start(recording)
                rows = cursor.fetchall()
                assert (q.runnable in recording.statements) is runs, q.name
                ran = conn.execute(q.runnable)
                assert columns == [d[0] for d in ran.description] and rows == ran.fetchall(), q.name
                assert bool(rows) is runs, q.name
    reader = WarehouseReader(bare, ServeSettings())
    with reader.connect() as conn:  # as the MCP server reads them
        for q in declared:
            answer = reader.collect(*q.start(conn))
            assert (answer.rows, answer.note) == ([], None) and answer.columns, q.name
    parsed = parse_query(
        "sample", "-- What it does.\n-- rows of spans: none without spans\nSELECT 1 FROM spans\n"
    )
    assert (parsed.description, parsed.rows_of) == ("What it does.", "spans")


def test_daily_volume_with_app_and_day_filters(warehouse: Warehouse) -> None:
    everything = samples.all_conversations()
    per_day = Counter(samples.utc_day(item["startTime"]) for _, item in everything)
    live = Counter(
        samples.utc_day(item["startTime"]) for _, item in everything if item.get("source") == "LIVE"
    )
    found = query(warehouse, "daily_volume")
    assert [(r["day"], r["conversations"], r["live"]) for r in found] == [
        (day, per_day[day], live[day]) for day in samples.DAYS
    ]
    sales = Counter(samples.utc_day(item["startTime"]) for app, item in everything if app == samples.SALES)
    assert [(r["day"], r["conversations"]) for r in query(warehouse, "daily_volume", app="sales")] == sorted(
        sales.items()
    )
    assert [
        (r["day"], r["conversations"]) for r in query(warehouse, "daily_volume", app=samples.SALES)
    ] == sorted(sales.items())
    assert [r["day"] for r in query(warehouse, "daily_volume", since="2026-11-02")] == [NOV_2]
    assert [r["day"] for r in query(warehouse, "daily_volume", until="2026-11-02")] == [NOV_1]
    with pytest.raises(NamedQueryError) as refused:  # a slip of the name: not an empty answer
        query(warehouse, "daily_volume", app="no-such-app")
    assert (
        str(refused.value)
        == f"no app 'no-such-app' in the warehouse; it holds: {samples.SALES}, {samples.SUPPORT}"
    )


def test_conversation_volume_by_each_split(warehouse: Warehouse) -> None:
    everything = samples.all_conversations()
    readers = {
        "source": lambda app, item: [item.get("source", "SOURCE_UNSPECIFIED")],
        "channel_type": lambda app, item: [item.get("channelType", "CHANNEL_TYPE_UNSPECIFIED")],
        "language": lambda app, item: [item.get("languageCode", "und")],
        "input_type": lambda app, item: item.get("inputTypes") or ["INPUT_TYPE_UNSPECIFIED"],
        "app": lambda app, item: [app],
    }
    for split, read in readers.items():
        expected = Counter(
            (samples.utc_day(item["startTime"]), value)
            for app, item in everything
            for value in read(app, item)
        )
        found = query(warehouse, "conversation_volume", by=split)
        assert {(r["day"], r["value"]): r["conversations"] for r in found} == dict(expected), split
    with pytest.raises(NamedQueryError, match="expects one of source"):
        query(warehouse, "conversation_volume", by="weather")


def test_conversation_length_and_turn_latency(warehouse: Warehouse) -> None:
    found = {r["day"]: r for r in query(warehouse, "conversation_length", app="support")}
    for day in samples.DAYS:
        items = [
            i
            for a, i in samples.all_conversations()
            if a == samples.SUPPORT and samples.utc_day(i["startTime"]) == day
        ]
        assert found[day]["conversations"] == len(items)
        turns_p90 = samples.quantile([i["turnCount"] for i in items], 0.9)
        assert found[day]["turns_p90"] == approx(turns_p90, abs=0.0051)  # shown to 2 decimals
    roots = [s for s in samples.spans() if s["component"] == "Turn"]
    turn_rows = by_key(query(warehouse, "turn_latency"), "day", "app")  # exact per app and day
    groups = samples.grouped(roots, "day", "app")
    assert set(turn_rows) == set(groups) and len({app for _, app in groups}) == 2
    for key, mine in groups.items():
        perceived = [s["attributes"]["perceived latency (ms)"] for s in mine if s["attributes"]]
        assert turn_rows[key]["turns"] == len(mine)
        perceived_p99 = samples.quantile(perceived, 0.99)
        assert turn_rows[key]["perceived_p99_ms"] == approx(perceived_p99, abs=0.051)  # shown to 0.1 ms


def test_component_and_span_latency(warehouse: Warehouse) -> None:
    spans = samples.spans()
    found = by_key(query(warehouse, "component_latency"), "day", "app", "component")
    groups = samples.grouped(spans, "day", "app", "component")
    assert set(found) == set(groups)
    for key, members in groups.items():
        durations = [m["seconds"] for m in members]
        assert found[key]["spans"] == len(members)
        assert found[key]["p90_seconds"] == approx(samples.quantile(durations, 0.9), abs=6e-5)
    llm_only = query(warehouse, "component_latency", component="llm", since="2026-11-02")
    assert {(r["day"], r["component"]) for r in llm_only} == {(NOV_2, "LLM")}

    by_name = by_key(query(warehouse, "span_latency"), "day", "app", "span_name")
    names = samples.grouped(spans, "day", "app", "name")
    assert set(by_name) == set(names)
    for key, members in names.items():
        assert by_name[key]["spans"] == len(members)
        assert by_name[key]["p50_seconds"] == approx(
            samples.quantile([m["seconds"] for m in members], 0.5), abs=6e-5
        )  # rounded to 4 places
    assert {r["component"] for k, r in by_name.items() if k[2] == "TOOL:lookup_order"} == {"Tool"}
    listed = query(warehouse, "span_latency", app="support", since="2026-11-02", until="2026-11-03")
    p90s = [r["p90_seconds"] for r in listed]
    assert p90s and p90s == sorted(p90s, reverse=True)  # slowest first within each app and day


def test_tool_errors_and_trend(warehouse: Warehouse) -> None:
    events = samples.tool_events()
    totals = samples.grouped(events, "tool")
    found = query(warehouse, "tool_errors")
    assert {r["tool"] for r in found} == {tool for (tool,) in totals}
    for row in found:
        members = totals[(row["tool"],)]
        responses = [m for m in members if m["kind"] == "toolResponse"]
        errors = sum(m["error"] for m in responses)
        assert (row["calls"], row["responses"], row["errors"]) == (
            len(members) - len(responses),
            len(responses),
            errors,
        )
        assert row["error_rate"] == approx(round(errors / len(responses), 4))
    assert [r["errors"] for r in found] == sorted((r["errors"] for r in found), reverse=True)

    trend = {(r["day"], r["tool"]): r for r in query(warehouse, "tool_error_trend", app="support")}
    daily = samples.grouped([e for e in events if e["app"] == samples.SUPPORT], "day", "tool")
    assert {key: row["errors"] for key, row in trend.items()} == {
        key: sum(m["error"] for m in members) for key, members in daily.items()
    }


def test_token_usage(warehouse: Warehouse) -> None:
    llm = [
        dict(s, model=s["attributes"].get("model", "unknown"))
        for s in samples.spans()
        if s["component"] == "LLM"
    ]
    groups = samples.grouped(llm, "day", "app", "model")
    found = by_key(query(warehouse, "token_usage"), "day", "app", "model")
    assert set(found) == set(groups)
    for key, members in groups.items():
        attributes = [m["attributes"] for m in members]
        assert found[key]["llm_calls"] == len(members)
        assert found[key]["input_tokens"] == sum(int(a.get("input token count", 0)) for a in attributes)
        assert found[key]["output_tokens"] == sum(int(a.get("output token count", 0)) for a in attributes)
        first_chunk = [a["time to first chunk (ms)"] for a in attributes if "time to first chunk (ms)" in a]
        assert found[key]["first_chunk_p50_ms"] == approx(samples.quantile(first_chunk, 0.5))


def test_agent_transfer_flows(warehouse: Warehouse) -> None:
    transfers = samples.transfers()
    names = {t["to"]: t["to_display_name"] for t in transfers if t["to_display_name"]}
    expected = Counter((t["from"], t["to"]) for t in transfers)
    found = query(warehouse, "agent_transfer_flows")
    assert {(r["from_agent"], r["to_agent"]): r["transfers"] for r in found} == dict(expected)
    assert [r["transfers"] for r in found] == sorted((r["transfers"] for r in found), reverse=True)
    for row in found:
        if row["from_agent"] is None:
            assert row["from_label"] == "(unknown entry agent)"
        else:
            assert row["from_label"] == names.get(row["from_agent"], row["from_agent"].rsplit("/", 1)[-1])
        assert row["to_label"] == names.get(row["to_agent"], row["to_agent"].rsplit("/", 1)[-1])
    day_two = query(warehouse, "agent_transfer_flows", since="2026-11-02", app="sales")
    assert sum(r["transfers"] for r in day_two) == sum(
        1 for t in transfers if t["day"] == NOV_2 and t["app"] == samples.SALES
    )


def test_evaluation_pass_rates_and_latency(warehouse: Warehouse) -> None:
    runs = samples.evaluation_runs()
    completed = [run for app_runs in runs.values() for run in app_runs if run["state"] == "COMPLETED"]
    found = query(warehouse, "evaluation_pass_rates")
    expected = [
        (run["name"], evaluation, counts.get("passedCount", 0))
        for run in sorted(completed, key=lambda r: r["createTime"])
        for evaluation, counts in sorted(run["evaluationRunSummaries"].items())
    ]
    assert [(r["evaluation_run_name"], r["evaluation_name"], r["passed"]) for r in found] == expected
    refund = query(warehouse, "evaluation_pass_rates", evaluation="refund")
    assert [r["pass_rate"] for r in refund] == [approx(0.8), approx(0.8), approx(0.4)]
    assert [r["app_version_label"] for r in refund] == ["v1", "v2", "v3"]

    latency = query(warehouse, "evaluation_latency", kind="tool", app="support")
    assert [(r["evaluation_run_name"].rsplit("/", 1)[-1], r["label"], r["p90_seconds"]) for r in latency] == [
        ("run-1", "Lookup", 0.5),
        ("run-2", "Cancel", 0.6),
        ("run-2", "Lookup", 0.5),
        ("run-3", "Lookup", 0.6),
    ]
    every_kind = {r["kind"] for r in query(warehouse, "evaluation_latency")}
    assert every_kind == {"tool", "llm_call", "guardrail", "callback"}


def test_evaluation_run_durations_come_from_each_final_runs_operation(warehouse: Warehouse) -> None:
    final = [
        run
        for app_runs in samples.evaluation_runs().values()
        for run in app_runs
        if run["state"] in ("COMPLETED", "ERROR", "CANCELLED")
    ]
    found = query(warehouse, "evaluation_run_durations")
    assert [(r["evaluation_run_name"], r["state"], r["run_seconds"]) for r in found] == [
        (run["name"], run["state"], samples.run_seconds(run))
        for run in sorted(final, key=lambda r: r["createTime"])
    ]
    assert all(r["seconds_per_result"] == round(r["run_seconds"] / 10, 3) for r in found)
    support = query(warehouse, "evaluation_run_durations", app="support")
    assert {r["app"] for r in support} == {samples.SUPPORT} and len(support) == len(found) - 1


def test_evaluation_regressions_compare_the_two_latest_completed_runs(warehouse: Warehouse) -> None:
    found = query(warehouse, "evaluation_regressions")
    assert {r["app"] for r in found} == {samples.SUPPORT}  # sales has one completed run only
    assert {(r["previous_run"], r["latest_run"]) for r in found} == {
        (f"{samples.SUPPORT}/evaluationRuns/run-2", f"{samples.SUPPORT}/evaluationRuns/run-3")
    }
    status = {(r["kind"], r["label"], r["metric"]): r["status"] for r in found}
    # pass rates: refund 4/5 → 2/5, transfer 1/2 → 2/2, greeting unchanged, escalation new
    assert status[("evaluation", "refund", "pass_rate")] == "regressed"
    assert status[("evaluation", "transfer", "pass_rate")] == "improved"
    assert status[("evaluation", "greeting", "pass_rate")] == "unchanged"
    assert status[("evaluation", "escalation", "pass_rate")] == "new"
    # latency: lookup p90 0.5 → 0.6 (+20 %) regressed, p99 1.0 → 1.05 (+5 %) within 10 %
    assert status[("tool", "Lookup", "p90_seconds")] == "regressed"
    assert status[("tool", "Lookup", "p99_seconds")] == "unchanged"
    assert status[("tool", "Cancel", "p50_seconds")] == "gone"
    assert status[("llm_call", "gemini-2.5-flash", "p90_seconds")] == "improved"
    assert status[("guardrail", "pii", "p90_seconds")] == "unchanged"  # +4 %
    # scores and golden turns: hallucination 0 → 1, turn latency p90 1 s → 2.5 s
    assert status[("score", "hallucination", "mean_score")] == "regressed"
    assert status[("turn", "golden turn latency", "p90_seconds")] == "regressed"
    turn = next(r for r in found if r["kind"] == "turn")
    assert (turn["previous_value"], turn["latest_value"]) == (approx(1.0), approx(2.5))
    refund = next(r for r in found if r["label"] == "refund")
    assert (refund["previous_value"], refund["latest_value"]) == (approx(0.8), approx(0.4))
    assert refund["change"] == approx(-0.4)
    assert found[0]["status"] == "regressed"

    strict = {
        (r["kind"], r["label"], r["metric"])
        for r in query(warehouse, "evaluation_regressions", max_latency_rise="0.01", status="regressed")
    }
    assert ("guardrail", "pii", "p90_seconds") in strict and ("tool", "Lookup", "p99_seconds") in strict
    lenient = query(warehouse, "evaluation_regressions", max_pass_rate_drop="0.5", status="regressed")
    assert ("evaluation", "refund", "pass_rate") not in {
        (r["kind"], r["label"], r["metric"]) for r in lenient
    }
    assert query(warehouse, "evaluation_regressions", app="sales") == []


def test_the_cli_lists_parameters_binds_them_and_refuses_bad_ones(
    warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CES_WAREHOUSE", warehouse.path)
    assert main(["query", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "evaluation_regressions" in listed and "--param since DATE = 1970-01-01" in listed
    assert "--param by CHOICE(source|channel_type|language|input_type|app) = source" in listed

    assert (
        main(
            [
                "query",
                "daily_volume",
                "--format",
                "json",
                "--param",
                "app=support",
                "--param",
                "since=2026-11-02",
            ]
        )
        == 0
    )
    assert [row["day"] for row in json.loads(capsys.readouterr().out)] == ["2026-11-02"]

    for bad, message in (
        ("since=2026-13-01", "expects a date (YYYY-MM-DD)"),
        ("colour=blue", "has no parameter colour"),
        ("since", "--param expects NAME=VALUE"),
    ):
        assert main(["query", "daily_volume", "--param", bad]) == 2
        assert message in capsys.readouterr().err
    assert main(["query", "daily_volume", "--param", "app=no-such-app"]) == 2
    assert "no app 'no-such-app' in the warehouse; it holds: " in capsys.readouterr().err
    assert main(["query", "component_latency", "--param", "component='; DROP TABLE conversations; --"]) == 0
    assert Warehouse(warehouse.path).row_counts()["conversations"] == len(samples.all_conversations())


def test_evaluation_failures_tie_each_failure_to_its_replayed_turn(warehouse: Warehouse) -> None:
    """The sample's failing result: a wrong tool and a hallucination on its first turn, which
    replayed support's second conversation of the first day."""
    conversation = f"{samples.SUPPORT}/conversations/{NOV_1:%Y%m%d}-1"
    (item,) = [item for app, item in samples.all_conversations() if item["name"] == conversation]
    turn = item["turns"][0]
    stack, durations = list(turn["rootSpan"].get("childSpans", [])), []  # below the turn's root
    while stack:
        span = stack.pop()
        durations.append((samples.seconds(span["duration"]), span["name"]))
        stack += span.get("childSpans", [])
    slowest_seconds, slowest_name = max(durations)
    errors = [
        chunk["toolResponse"]
        for message in turn["messages"]
        for chunk in message.get("chunks", [])
        if "error" in chunk.get("toolResponse", {}).get("response", {})
    ]
    rows = query(warehouse, "evaluation_failures", run="run-3")
    assert [(r["failure_kind"], r["failure"], r["subject"], r["score"], r["explanation"]) for r in rows] == [
        ("expectation", "agent_response", None, 1.0, samples.UNCONFIRMED),  # the judge's reason
        ("expectation", "agent_transfer", f"{samples.SUPPORT}/agents/billing", None, None),  # expected
        ("expectation", "tool_call", f"{samples.SUPPORT}/tools/refund", None, None),
        ("score", "hallucination", None, 1.0, None),
    ]
    for row in rows:
        assert (row["conversation_name"], row["turn_index"], row["turn_latency_seconds"]) == (
            conversation,
            0,
            2.5,
        )
        assert (row["slowest_span"], row["slowest_span_seconds"]) == (slowest_name, approx(slowest_seconds))
        assert row["erroring_tool"] == (errors[0].get("tool") if errors else None)
    # By default each app's newest completed run: support's run 3 is its newest.
    assert query(warehouse, "evaluation_failures", app="support") == rows
    assert query(warehouse, "evaluation_failures", run="run-2") == []


def test_parameter_values_reach_duckdb_as_given() -> None:
    """Each type's value arrives as itself: quotes, comment marks and backslashes in text, an
    offset timestamp in UTC, an exponent; a NUL in text is refused."""
    echo = parse_query(
        "echo",
        "-- Every type back.\n"
        "-- param s VARCHAR = x: text\n-- param d DATE = 2026-01-01: day\n"
        "-- param t TIMESTAMP = NULL: instant\n-- param n INTEGER = 0: count\n"
        "-- param f DOUBLE = 0: number\n-- param b BOOLEAN = false: flag\n"
        "SELECT $s AS s, $d AS d, $t AS t, $n AS n, $f AS f, $b AS b, $s = 'x' AS is_default",
    )
    text = "it's '' -- ; \\' \n ü"
    given = {
        "s": text,
        "d": "2026-11-02",
        "t": "2026-11-02T10:00:00+02:00",
        "n": "-7",
        "f": "1e-300",
        "b": "yes",
    }
    with duckdb.connect() as conn:
        conn.execute("SET TimeZone = 'UTC'")
        _, rows = echo.execute(conn, given)
        assert rows == [
            (text, date(2026, 11, 2), datetime(2026, 11, 2, 8, tzinfo=UTC), -7, 1e-300, True, False)
        ]
        _, defaults = echo.execute(conn, {})
        assert defaults == [("x", date(2026, 1, 1), None, 0, 0.0, False, True)]
        with pytest.raises(NamedQueryError, match="NUL"):
            echo.execute(conn, {"s": "a\x00b"})


def test_a_query_from_the_cli_loads_neither_pandas_nor_pyarrow(warehouse: Warehouse) -> None:
    """What `ces-pipeline query` imports is its start time: pandas (which DuckDB's Python binding
    of a parameter would import) and pyarrow (the load side) are over half a second of it."""
    script = (
        "import sys\nfrom pipelines.cli import main\n"
        "assert main(['query', 'daily_volume', '--param', 'app=sales', '--format', 'csv']) == 0\n"
        "print(sorted(name for name in ('pandas', 'pyarrow') if name in sys.modules))\n"
    )
    env = {**os.environ, "CES_WAREHOUSE": warehouse.path}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "day,conversations,live,simulator,evaluation,unspecified" or lines[0].startswith(
        "day,"
    )
    assert len(lines) == 1 + 2 + 1  # the header, the two days, the imports
    assert lines[-1] == "[]"


def test_query_values_are_written_as_json_the_same_way_for_the_cli_and_the_mcp_server() -> None:
    """Dates and instants in ISO 8601, decimals as their text, a non-finite number as null (JSON has
    none), an interval as an ISO duration, lists and structs item by item."""
    sql = (
        "SELECT DATE '2026-11-02' AS d, TIMESTAMPTZ '2026-11-02 10:00:00+02' AS t, 1.50::DECIMAL(4, 2) AS m, "
        "'nan'::DOUBLE AS nan, 'inf'::DOUBLE AS inf, INTERVAL 90 SECOND AS i, [1, NULL] AS l, "
        "{'k': 'v'} AS s, 'ü' AS u"
    )
    with duckdb.connect() as conn:
        conn.execute("SET TimeZone = 'UTC'")
        cursor = conn.execute(sql)
        columns = [column for column, *_ in cursor.description]
        (row,) = cursor.fetchall()
    expected = {
        "d": "2026-11-02",
        "t": "2026-11-02T08:00:00Z",
        "m": "1.50",
        "nan": None,
        "inf": None,
        "i": "PT90S",
        "l": [1, None],
        "s": {"k": "v"},
        "u": "ü",
    }
    assert json.loads(json_lines(columns, [row])) == expected
    assert jsonable(dict(zip(columns, row, strict=True))) == expected


def test_coverage_is_what_the_tables_hold_of_each_app(warehouse: Warehouse) -> None:
    with warehouse.connect(read_only=True) as conn:
        held = conn.execute(
            "SELECT app, min(partition_date), max(partition_date), count(DISTINCT partition_date), count(*), "
            "count(*) FILTER (WHERE end_time IS NULL) FROM conversations GROUP BY app"
        ).fetchall()
        runs = dict(conn.execute("SELECT app, count(*) FROM evaluation_runs GROUP BY app").fetchall())
        rejects = dict(conn.execute("SELECT app, count(*) FROM rejects GROUP BY app").fetchall())
    found = by_key(query(warehouse, "coverage"), "app")
    assert set(found) == {(app,) for app, *_ in held} | {(app,) for app in runs}
    for app, first, newest, days, conversations, open_ones in held:
        row = found[(app,)]
        assert (row["first_day"], row["newest_day"]) == (first, newest) == (NOV_1, NOV_2)
        assert (row["days_with_conversations"], row["days_without_conversations"]) == (days, 0)
        assert (row["conversations"], row["in_progress"]) == (conversations, open_ones)
        assert (row["evaluation_runs"], row["rejects"]) == (runs.get(app, 0), rejects.get(app, 0))
    assert sum(row["rejects"] for row in found.values()) == 1  # the sample's one rejected conversation
    assert [row["app"] for row in query(warehouse, "coverage", app="sales")] == [samples.SALES]


def test_coverage_tells_the_quiet_days_from_the_days_no_load_fetched(tmp_path) -> None:
    """Nov 1 and 4 with conversations, Nov 2 and 6 loaded without any (quiet), Nov 3 never loaded
    (and Nov 5, past the newest day with conversations); an app whose every loaded day was quiet
    shows too."""
    from conversation_samples import APP, full_conversation
    from test_warehouse import OTHER_APP, write_partition

    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.lake.store import Lake

    lake, warehouse = Lake(str(tmp_path / "lake")), Warehouse(str(tmp_path / "w.duckdb"))
    days = [date(2026, 11, 1), date(2026, 11, 4)]
    quiet = [(APP, date(2026, 11, 2)), (APP, date(2026, 11, 6)), (OTHER_APP, date(2026, 11, 2))]
    for day in days:
        write_partition(lake, APP, day, [full_conversation(f"{day:%d}", start=f"{day}T10:00:00Z")])
    for app, day in quiet:
        write_partition(lake, app, day, [])
    load_conversation_partitions(lake, warehouse, [(APP, day) for day in days])
    load_conversation_partitions(lake, warehouse, quiet)
    load_conversation_partitions(lake, warehouse, quiet[:1])  # loaded again: listed once
    other, first = query(warehouse, "coverage")  # sales, support
    assert (first["app"], first["first_day"], first["newest_day"], first["conversations"]) == (APP, *days, 2)
    assert (first["days_with_conversations"], first["days_without_conversations"]) == (2, 2)
    assert (first["days_not_loaded"], first["newest_loaded_day"]) == (1, date(2026, 11, 6))
    assert (first["evaluation_runs"], first["newest_evaluation_run"], first["rejects"]) == (0, None, 0)
    assert (other["app"], other["first_day"], other["conversations"], other["days_not_loaded"]) == (
        OTHER_APP,
        None,
        0,
        0,
    )
    assert other["newest_loaded_day"] == date(2026, 11, 2)
    with warehouse.connect(read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM loaded_partitions").fetchone() == (5,)


def test_the_default_window_ends_on_the_newest_day_with_conversations_as_the_files_list_holds_it(
    tmp_path,
) -> None:
    """Quiet days loaded after the newest day with conversations do not move the default window;
    on a DuckDB file that day comes from its list of parts: with every daily_conversations part
    gone, `window_start` still answers (a query over every app opens the rollup's parts once)."""
    from conversation_samples import APP, full_conversation
    from test_warehouse import OTHER_APP, write_partition

    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.lake.store import Lake

    lake, warehouse = Lake(str(tmp_path / "lake")), Warehouse(str(tmp_path / "w.duckdb"))
    newest = date(2026, 11, 4)
    quiet = [(APP, date(2026, 11, 6)), (OTHER_APP, date(2026, 11, 8))]
    for app, day in [(APP, NOV_2), (APP, newest), *quiet]:
        found = [] if (app, day) in quiet else [full_conversation(f"{day:%d}", start=f"{day}T10:00:00Z")]
        write_partition(lake, app, day, found)
        load_conversation_partitions(lake, warehouse, [(app, day)])
    first = date(2026, 10, 6)  # the 30 days up to Nov 4
    assert min(row["day"] for row in query(warehouse, "daily_volume")) == NOV_2
    assert [row["day"] for row in query(warehouse, "daily_volume", until="2026-11-04")] == [NOV_2]
    (rollup,) = (tmp_path / "w.duckdb.parts").glob("daily_conversations")
    rollup.rename(tmp_path / "elsewhere")
    with warehouse.connect(read_only=True) as conn:
        assert conn.execute("SELECT window_start(NULL, NULL)").fetchall() == [(first,)]
        until = conn.execute("SELECT window_start(NULL, DATE '2026-11-04')").fetchall()
        assert until == [(date(2026, 10, 4),)]  # the 30 days up to Nov 2, the newest day before


def test_a_question_about_one_app_reads_that_apps_rollup_parts_alone_with_the_same_answers(
    warehouse: Warehouse,
) -> None:
    """Asked about one app, a named query reads each rollup through a view of that app's parts
    (`part_views.reading_apps`, as `run_query` and the MCP server do): only its rows are there,
    and every query answers as it does over every app's parts."""
    asked = [query for query in named_queries() if "app" in {p.name for p in query.parameters}]
    assert len(asked) > 20
    with warehouse.connect(read_only=True) as conn:
        for app in samples.APPS:
            for query in asked:
                expected = query.execute(conn, {"app": app.rsplit("/", 1)[-1]})
                with part_views.reading_apps(conn, warehouse.scoped_parts_root, [app]):
                    assert query.execute(conn, {"app": app.rsplit("/", 1)[-1]}) == expected, query.name
                    seen = conn.execute("SELECT DISTINCT app FROM daily_conversations").fetchall()
                    assert seen == [(app,)]
        # the block over, every app's parts again
        everyone = conn.execute("SELECT DISTINCT app FROM daily_conversations ORDER BY app").fetchall()
        assert everyone == sorted((app,) for app in samples.APPS)


def test_a_question_about_an_app_whose_newest_day_lags_has_the_window_of_every_app(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The default window is the 30 days up to the newest day any app loaded: asked about an app
    that stopped two months before the others, a named query answers as it does over every app's
    parts (that app's rows outside the window), though it reads that app's parts alone."""
    from test_warehouse import write_partition

    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.lake.store import Lake

    root = tmp_path_factory.mktemp("lagging")
    lake, warehouse = Lake(str(root / "lake")), Warehouse(str(root / "warehouse.duckdb"))
    lagging = {samples.SALES: date(2026, 9, 1), samples.SUPPORT: date(2026, 11, 1)}
    rng = random.Random(7)
    for app, day in lagging.items():
        write_partition(lake, app, day, [samples.conversation(app, day, index, rng) for index in range(3)])
    load_conversation_partitions(lake, warehouse, list(lagging.items()))
    asked = [query for query in named_queries() if "app" in {p.name for p in query.parameters}]
    with warehouse.connect(read_only=True) as conn:
        for named in asked:
            expected = named.execute(conn, {"app": "sales"})  # through every app's parts
            assert run_query(warehouse, named.name, {"app": "sales"}) == expected, named.name
    assert query(warehouse, "daily_volume", app="sales") == []  # September: before November's 30 days
    assert [row["day"] for row in query(warehouse, "daily_volume", app="sales", since="2026-09-01")] == [
        date(2026, 9, 1)
    ]


def test_what_changed_for_one_app_reads_its_rollup_parts_alone_with_the_same_answer(
    warehouse: Warehouse,
) -> None:
    with warehouse.connect(read_only=True) as conn:
        for app in samples.APPS:
            everyone = what_changed(conn, app, NOV_2, date(2026, 11, 3))  # through every app's parts
            alone = what_changed(conn, app, NOV_2, date(2026, 11, 3), warehouse.scoped_parts_root)
            assert alone == everyone and alone["costs"] and alone["metrics"], app
