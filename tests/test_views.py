"""Every trend view on a small warehouse of known data, against values computed from the input JSON."""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path

import duckdb
import pytest
import trend_samples as samples
from pytest import approx
from raw_tables import editable_tables

from pipelines.transform.schemas import CONVERSATION_TABLES
from pipelines.warehouse import rollups
from pipelines.warehouse.catalog import view_files, view_names
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.rollups import rollup_files, rollup_names

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return samples.build_warehouse(tmp_path_factory.mktemp("trends"))[1]


def rows(warehouse: Warehouse, sql: str) -> list[dict]:
    with warehouse.connect(read_only=True) as conn:
        cursor = conn.execute(sql)
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def by_key(found: list[dict], *keys: str) -> dict[tuple, dict]:
    keyed = {tuple(row[key] for key in keys): row for row in found}
    assert len(keyed) == len(found), f"{keys} is not the grain"
    return keyed


def test_every_view_file_is_one_view_named_after_it_with_a_header() -> None:
    for path in view_files():
        text = path.read_text()
        assert text.startswith("-- "), path.name
        assert "Grain: one row per" in text, path.name
        assert text.count("CREATE OR REPLACE VIEW") == 1, path.name
        assert f"CREATE OR REPLACE VIEW {path.stem} AS" in text, path.name
    order = view_names()
    assert order.index("evaluation_pass_rate_by_run") < order.index("daily_evaluation_pass_rate")


def test_every_rollup_file_is_one_select_of_its_partitions_with_a_header() -> None:
    for path in rollup_files():
        text = path.read_text()
        assert text.startswith("-- ") and "Grain: one row per (day, app" in text, path.name
        assert "CREATE" not in text and "rollup_partitions" in text, path.name
        assert "$first AND $last" in text, path.name  # a day range the tables' zone maps skip by


def test_days_do_not_depend_on_the_session_time_zone(warehouse: Warehouse) -> None:
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        conn.execute("SET TimeZone = 'Pacific/Kiritimati'")  # UTC+14
        days = conn.execute("SELECT DISTINCT day FROM daily_conversations ORDER BY day").fetchall()
    assert [day for (day,) in days] == list(samples.DAYS)


def test_daily_conversations_and_input_types(warehouse: Warehouse) -> None:
    expected: Counter = Counter()
    turns: Counter = Counter()
    open_: Counter = Counter()
    input_types: Counter = Counter()
    for app, item in samples.all_conversations():
        day = samples.utc_day(item["startTime"])
        key = (
            day,
            app,
            item.get("source", "SOURCE_UNSPECIFIED"),
            item.get("channelType", "CHANNEL_TYPE_UNSPECIFIED"),
            item.get("languageCode", "und"),
        )
        expected[key] += 1
        turns[key] += item["turnCount"]
        open_[key] += "endTime" not in item
        for kind in item.get("inputTypes") or ["INPUT_TYPE_UNSPECIFIED"]:
            input_types[(day, app, kind)] += 1
    found = by_key(
        rows(warehouse, "SELECT * FROM daily_conversations"),
        "day",
        "app",
        "source",
        "channel_type",
        "language_code",
    )
    assert {key: row["conversations"] for key, row in found.items()} == dict(expected)
    assert {key: row["turns"] for key, row in found.items()} == dict(turns)
    assert {key: row["in_progress"] for key, row in found.items()} == dict(open_)
    by_type = by_key(
        rows(warehouse, "SELECT * FROM daily_conversations_by_input_type"), "day", "app", "input_type"
    )
    assert {key: row["conversations"] for key, row in by_type.items()} == dict(input_types)

    by_source: Counter = Counter()
    for (day, app, source, _, _), count in expected.items():
        by_source[(day, app, source)] += count
    legacy = by_key(rows(warehouse, "SELECT * FROM daily_conversations_by_source"), "day", "app", "source")
    assert {key: row["conversations"] for key, row in legacy.items()} == dict(by_source)


def test_daily_conversation_length(warehouse: Warehouse) -> None:
    found = by_key(rows(warehouse, "SELECT * FROM daily_conversation_length"), "day", "app")
    groups = samples.grouped(
        (
            {
                "day": samples.utc_day(item["startTime"]),
                "app": app,
                "turns": item["turnCount"],
                "duration": (
                    samples.parse_timestamp_micros(item["endTime"])
                    - samples.parse_timestamp_micros(item["startTime"])
                )
                / 1e6
                if "endTime" in item
                else None,
            }
            for app, item in samples.all_conversations()
        ),
        "day",
        "app",
    )
    assert set(found) == set(groups)
    for key, members in groups.items():
        row = found[key]
        turns = [m["turns"] for m in members]
        durations = [m["duration"] for m in members if m["duration"] is not None]
        assert row["conversations"] == len(members) and row["ended_conversations"] == len(durations)
        assert row["turns_avg"] == approx(sum(turns) / len(turns))
        assert row["turns_max"] == max(turns)
        assert row["duration_max_seconds"] == approx(max(durations))
        for name, q in QUANTILES:
            assert row[f"turns_{name}"] == approx(samples.quantile(turns, q)), (key, name)
            assert row[f"duration_{name}_seconds"] == approx(samples.quantile(durations, q)), (key, name)


def test_component_spans_map_prefixed_names_to_components(warehouse: Warehouse) -> None:
    found = rows(warehouse, "SELECT name, component, subject, day FROM component_spans")
    expected = samples.spans()
    assert len(found) == len(expected)
    assert Counter((r["name"], r["component"]) for r in found) == Counter(
        (s["name"], s["component"]) for s in expected
    )
    pairs = {(r["name"], r["component"], r["subject"]) for r in found}
    assert ("TOOL:lookup_order", "Tool", "lookup_order") in pairs
    assert ("AGENT:billing", "Agent", "billing") in pairs
    assert ("tool:search", "Tool", "search") in pairs
    assert ("Planner", "Other", None) in pairs
    assert ("Tool", "Tool", "lookup_order") in pairs  # the tool's "name" attribute
    assert {r["subject"] for r in found if r["name"] == "LLM"} == set(samples.MODELS)
    # a conversation that started at 23:59:30 keeps its spans on its start day
    assert {r["day"] for r in found} == set(samples.DAYS)


def test_daily_component_latency(warehouse: Warehouse) -> None:
    found = by_key(rows(warehouse, "SELECT * FROM daily_component_latency"), "day", "app", "component")
    groups = samples.grouped(samples.spans(), "day", "app", "component")
    assert set(found) == set(groups)
    assert {component for _, _, component in found} == {
        "Turn",
        "LLM",
        "Tool",
        "Callback",
        "Guardrail",
        "TTS",
        "VAD",
        "Agent",
        "Other",
    }
    for key, members in groups.items():
        durations = [m["seconds"] for m in members]
        row = found[key]
        assert row["spans"] == len(members)
        assert row["max_seconds"] == approx(max(durations))
        assert row["total_seconds"] == approx(sum(durations))
        for name, q in QUANTILES:
            assert row[f"{name}_seconds"] == approx(samples.quantile(durations, q)), (key, name)


def test_daily_turn_latency(warehouse: Warehouse) -> None:
    found = by_key(rows(warehouse, "SELECT * FROM daily_turn_latency"), "day", "app")
    roots = [s for s in samples.spans() if s["component"] == "Turn"]
    groups = samples.grouped(roots, "day", "app")
    assert set(found) == set(groups)
    for key, members in groups.items():
        perceived = [m["attributes"]["perceived latency (ms)"] for m in members if m["attributes"]]
        row = found[key]
        assert row["turns"] == len(members)
        assert row["turns_with_perceived_latency"] == len(perceived)
        for name, q in QUANTILES:
            assert row[f"perceived_{name}_ms"] == approx(samples.quantile(perceived, q))
            assert row[f"duration_{name}_seconds"] == approx(
                samples.quantile([m["seconds"] for m in members], q)
            )


def test_daily_llm_usage(warehouse: Warehouse) -> None:
    found = by_key(rows(warehouse, "SELECT * FROM daily_llm_usage"), "day", "app", "model")
    llm = [
        dict(s, model=s["attributes"].get("model", "unknown"))
        for s in samples.spans()
        if s["component"] == "LLM"
    ]
    groups = samples.grouped(llm, "day", "app", "model")
    assert set(found) == set(groups)
    for key, members in groups.items():
        attributes = [m["attributes"] for m in members]
        inputs = sum(int(a.get("input token count", 0)) for a in attributes)
        outputs = sum(int(a.get("output token count", 0)) for a in attributes)
        first_chunk = [a["time to first chunk (ms)"] for a in attributes if "time to first chunk (ms)" in a]
        row = found[key]
        assert (row["llm_calls"], row["input_tokens"], row["output_tokens"]) == (
            len(members),
            inputs,
            outputs,
        )
        assert row["total_tokens"] == inputs + outputs
        for name, q in QUANTILES:
            assert row[f"first_chunk_{name}_ms"] == approx(samples.quantile(first_chunk, q))
        assert row["p90_seconds"] == approx(samples.quantile([m["seconds"] for m in members], 0.9))


def test_daily_tool_calls_and_error_rate(warehouse: Warehouse) -> None:
    events = samples.tool_events()
    groups = samples.grouped(events, "day", "app", "tool")
    found = by_key(rows(warehouse, "SELECT * FROM daily_tool_calls"), "day", "app", "tool")
    assert set(found) == set(groups)
    assert any(row["errors"] for row in found.values())
    for key, members in groups.items():
        responses = [m for m in members if m["kind"] == "toolResponse"]
        errors = sum(m["error"] for m in responses)
        row = found[key]
        assert row["calls"] == sum(m["kind"] == "toolCall" for m in members)
        assert (row["responses"], row["errors"]) == (len(responses), errors)
        assert row["error_rate"] == approx(errors / len(responses))
        assert row["display_name"] == members[0]["display_name"]
    legacy = by_key(rows(warehouse, "SELECT * FROM daily_tool_error_rate"), "day", "tool")
    assert {key: row["errors"] for key, row in legacy.items()} == {
        (day, tool): row["errors"] for (day, _, tool), row in found.items()
    }


def test_agent_transfer_steps_and_daily_flows(warehouse: Warehouse) -> None:
    expected = samples.transfers()
    steps = rows(warehouse, "SELECT * FROM agent_transfer_steps ORDER BY conversation_name, step")
    assert len(steps) == len(expected)
    per_conversation = samples.grouped(expected, "conversation")
    for (conversation,), members in per_conversation.items():
        mine = [r for r in steps if r["conversation_name"] == conversation]
        assert [(r["step"], r["from_agent"], r["to_agent"]) for r in mine] == [
            (index + 1, t["from"], t["to"]) for index, t in enumerate(members)
        ]
    assert any(r["from_agent"] is None for r in steps)  # a conversation without entry agent

    flows = by_key(
        rows(warehouse, "SELECT * FROM daily_agent_transfers"), "day", "app", "from_agent", "to_agent"
    )
    groups = samples.grouped(expected, "day", "app", "from", "to")
    assert {key: row["transfers"] for key, row in flows.items()} == {k: len(v) for k, v in groups.items()}
    assert {key: row["conversations"] for key, row in flows.items()} == {
        k: len({t["conversation"] for t in v}) for k, v in groups.items()
    }


def _summaries() -> list[dict]:
    found = []
    for app, runs in samples.evaluation_runs().items():
        for run in runs:
            for evaluation, counts in run["evaluationRunSummaries"].items():
                passed, failed, errors = (counts.get(f"{k}Count", 0) for k in ("passed", "failed", "error"))
                found.append(
                    {
                        "app": app,
                        "run": run["name"],
                        "state": run["state"],
                        "day": samples.utc_day(run["createTime"]),
                        "version": run["appVersion"],
                        "evaluation": evaluation,
                        "passed": passed,
                        "failed": failed,
                        "errors": errors,
                    }
                )
    return found


def test_evaluation_pass_rates_by_run_and_per_day(warehouse: Warehouse) -> None:
    expected = _summaries()
    found = by_key(
        rows(warehouse, "SELECT * FROM evaluation_pass_rate_by_run"), "evaluation_run_name", "evaluation_name"
    )
    assert set(found) == {(s["run"], s["evaluation"]) for s in expected}
    for s in expected:
        row = found[(s["run"], s["evaluation"])]
        results = s["passed"] + s["failed"] + s["errors"]
        assert (row["passed"], row["failed"], row["errors"], row["results"]) == (
            s["passed"],
            s["failed"],
            s["errors"],
            results,
        )
        assert row["pass_rate"] == approx(s["passed"] / results)
        assert row["app_version_label"] == "v" + s["version"].rsplit("/", 1)[-1]
        assert row["evaluation_label"] == s["evaluation"].rsplit("/", 1)[-1]

    daily = by_key(
        rows(warehouse, "SELECT * FROM daily_evaluation_pass_rate"),
        "day",
        "app",
        "app_version",
        "evaluation_name",
    )
    completed = samples.grouped(
        [s for s in expected if s["state"] == "COMPLETED"], "day", "app", "version", "evaluation"
    )
    assert set(daily) == set(completed)
    for key, members in completed.items():
        passed = sum(m["passed"] for m in members)
        results = sum(m["passed"] + m["failed"] + m["errors"] for m in members)
        assert daily[key]["runs"] == len(members)
        assert daily[key]["pass_rate"] == approx(passed / results)


def test_evaluation_latency_by_run(warehouse: Warehouse) -> None:
    found = by_key(
        rows(warehouse, "SELECT * FROM evaluation_latency_by_run"), "evaluation_run_name", "kind", "subject"
    )
    expected = {}
    for app, runs in samples.evaluation_runs().items():
        for run in runs:
            report = run.get("latencyReport", {})
            for field, kind, subject in (
                ("toolLatencies", "tool", lambda e: e["tool"]),
                ("llmCallLatencies", "llm_call", lambda e: e["model"]),
                ("guardrailLatencies", "guardrail", lambda e: e["guardrail"]),
                ("callbackLatencies", "callback", lambda e: e["stage"]),
            ):
                for entry in report.get(field, []):
                    metrics = entry["latencyMetrics"]
                    expected[(run["name"], kind, subject(entry))] = (
                        app,
                        samples.seconds(metrics["p50Latency"]),
                        samples.seconds(metrics["p90Latency"]),
                        samples.seconds(metrics["p99Latency"]),
                        metrics["callCount"],
                    )
    assert set(found) == set(expected)
    for key, (app, p50, p90, p99, calls) in expected.items():
        row = found[key]
        assert (row["app"], row["call_count"]) == (app, calls)
        assert (row["p50_seconds"], row["p90_seconds"], row["p99_seconds"]) == approx((p50, p90, p99))
    labels = {row["label"] for row in found.values()}
    assert {"Lookup", "gemini-2.5-flash", "pii", "beforeModel"} <= labels


def test_views_are_described_for_bi_tools(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "empty.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        warehouse.ensure_schema(conn)  # idempotent: views re-created, comments re-applied
        comments = dict(
            conn.execute(
                "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
            ).fetchall()
        )
    conversation_tables = {spec.name for spec in CONVERSATION_TABLES}  # views of their parts
    # and the rollups, views of their parts too
    assert set(comments) - conversation_tables - set(rollup_names()) == set(view_names())
    assert all(comments.values()), comments


def test_a_toolset_tool_called_without_tool_id_counts_under_its_toolset(tmp_path: Path) -> None:
    """Named as evaluation latencies name it: the toolset alone, not NULL and dropped."""
    warehouse = Warehouse(str(tmp_path / "toolset.duckdb"))
    toolset = "projects/p/locations/l/apps/a/toolsets/crm"
    name = "projects/p/locations/l/apps/a/conversations/c"
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
        editable_tables(conn)
        day = date(2026, 11, 1)
        conn.execute(
            "INSERT INTO conversations (conversation_name, app, start_time, partition_date) "
            "VALUES (?, ?, ?, ?)",
            [name, "projects/p/locations/l/apps/a", "2026-11-01 10:00:00+00", day],
        )
        conn.execute(
            "INSERT INTO tool_calls (conversation_name, toolset, partition_date) VALUES (?, ?, ?)",
            [name, toolset, day],
        )
        conn.execute(
            "INSERT INTO tool_responses (conversation_name, toolset, is_error, partition_date) "
            "VALUES (?, ?, true, ?)",
            [name, toolset, day],
        )
        rollups.refresh(conn, [("projects/p/locations/l/apps/a", day)])  # as a load does
        calls = conn.execute("SELECT tool, display_name, calls, errors FROM daily_tool_calls").fetchall()
        rates = conn.execute("SELECT tool, responses, errors FROM daily_tool_error_rate").fetchall()
    assert calls == [(toolset, "crm", 1, 1)]
    assert rates == [(toolset, 1, 1)]


def test_turn_log_has_one_row_per_turn_shaped_like_the_bigquery_export(warehouse: Warehouse) -> None:
    expected = {}
    for app, item in samples.all_conversations():
        for position, turn in enumerate(item["turns"], start=1):
            said = {"user": [], "agent": []}
            tools, agents = [], []
            for message in turn["messages"]:
                for chunk in message["chunks"]:
                    if "text" in chunk:
                        said[message["role"]].append(chunk["text"])
                    if "toolCall" in chunk:
                        call = chunk["toolCall"]
                        tools.append(call.get("displayName") or call.get("toolsetTool", {}).get("toolId"))
                    if "agentTransfer" in chunk:
                        target = chunk["agentTransfer"]
                        agents.append(target.get("displayName") or target["targetAgent"].rsplit("/", 1)[-1])
            expected[(item["name"], position)] = {
                "project_id": "p1",
                "agent_id": app.rsplit("/", 1)[-1],
                "language_code": item.get("languageCode"),
                "request_text": " ".join(said["user"]),
                "responses": said["agent"],
                "tools": tools,
                "agents": agents,
                "day": samples.utc_day(item["startTime"]),
            }
    found = rows(
        warehouse,
        "SELECT project_id, agent_id, conversation_name, turn_position, language_code, partition_date, "
        "request ->> '$.queryInput.text.text' AS request_text, "
        "json_extract_string(response, '$.queryResult.responseMessages[*].text.text[0]') AS responses, "
        "json_extract_string(derived_data, '$.toolCalls[*]') AS tools, "
        "json_extract_string(derived_data, '$.agentTransfers[*]') AS agents, "
        "partial_responses, conversation_signals, bot_answer_feedback FROM turn_log",
    )
    keyed = by_key(found, "conversation_name", "turn_position")
    assert set(keyed) == set(expected)
    for key, want in expected.items():
        row = keyed[key]
        assert row["project_id"] == want["project_id"] and row["agent_id"] == want["agent_id"], key
        assert row["language_code"] == want["language_code"] and row["partition_date"] == want["day"], key
        assert row["request_text"] == want["request_text"], key
        assert row["responses"] == want["responses"], key
        assert (row["tools"], row["agents"]) == (want["tools"], want["agents"]), key
        assert row["partial_responses"] is row["conversation_signals"] is row["bot_answer_feedback"] is None


def _steps(item: dict) -> list[str]:
    """A conversation's tool calls and transfers in order, named as the trajectories name them."""
    found = []
    for turn in item["turns"]:
        for message in turn["messages"]:
            for chunk in message["chunks"]:
                if "toolCall" in chunk:
                    call = chunk["toolCall"]
                    found.append(call.get("displayName") or call["toolsetTool"]["toolId"])
                if "agentTransfer" in chunk:
                    target = chunk["agentTransfer"]
                    found.append(
                        "transfer:" + (target.get("displayName") or target["targetAgent"].rsplit("/", 1)[-1])
                    )
    return found


def test_conversation_trajectories_and_their_daily_rollup(warehouse: Warehouse) -> None:
    expected = {item["name"]: (app, _steps(item)) for app, item in samples.all_conversations()}
    keyed = by_key(rows(warehouse, "SELECT * FROM conversation_trajectories"), "conversation_name")
    found = {name: row for (name,), row in keyed.items()}
    assert set(found) == set(expected)
    for name, (app, steps) in expected.items():
        row = found[name]
        assert (row["app"], row["steps"], row["trajectory"]) == (app, steps, " > ".join(steps)), name
        assert row["tool_calls"] == sum(not step.startswith("transfer:") for step in steps)
        assert row["transfers"] == sum(step.startswith("transfer:") for step in steps)

    durations: dict[tuple, list] = {}
    for row in found.values():
        durations.setdefault((row["day"], row["app"], row["trajectory"]), []).append(row["duration_seconds"])
    daily = by_key(rows(warehouse, "SELECT * FROM daily_trajectories"), "day", "app", "trajectory")
    assert set(daily) == set(durations)
    for key, seconds in durations.items():
        ended = [value for value in seconds if value is not None]
        assert daily[key]["conversations"] == len(seconds), key
        assert daily[key]["p90_seconds"] == approx(samples.quantile(ended, 0.9)), key


def test_the_trajectories_query_ranks_each_days_trajectories_with_their_share(warehouse: Warehouse) -> None:
    from pipelines.warehouse.queries import run_query

    columns, answer = run_query(warehouse, "trajectories", {"top": 1})
    daily = rows(warehouse, "SELECT day, app, trajectory, conversations FROM daily_trajectories")
    totals: Counter = Counter()
    for row in daily:
        totals[(row["day"], row["app"])] += row["conversations"]
    assert len(answer) == len(totals)  # one per app and day at top 1
    for row in (dict(zip(columns, values, strict=True)) for values in answer):
        day_rows = [r for r in daily if (r["day"], r["app"]) == (row["day"], row["app"])]
        most = max(r["conversations"] for r in day_rows)
        assert row["conversations"] == most
        assert row["share"] == approx(round(most / totals[(row["day"], row["app"])], 4))


def test_a_days_trajectories_beyond_its_20_most_followed_share_one_other_row(tmp_path: Path) -> None:
    """However varied a day's conversations, its rollup holds at most 21 rows (a bounded cost per
    partition); the conversations all count, and the share of every kept trajectory stays right."""
    from conversation_samples import APP, full_conversation
    from test_warehouse import DAY, write_partition

    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.lake.store import Lake

    conversations = []
    for n in range(30):
        item = full_conversation(f"c{n}", start=f"{DAY}T{n // 3:02d}:{n % 3 * 10:02d}:00Z")
        for turn in item["turns"]:
            for message in turn.get("messages", []):
                for chunk in message.get("chunks", []):
                    if "toolCall" in chunk:  # one trajectory per conversation, but c0 and c1 alike
                        chunk["toolCall"]["displayName"] = f"tool{max(n, 1)}"
        conversations.append(item)
    lake = Lake(str(tmp_path / "lake"))
    write_partition(lake, APP, DAY, conversations)
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    found = rows(warehouse, "SELECT trajectory, steps, conversations FROM daily_trajectories")
    assert len(found) == 21 and sum(row["conversations"] for row in found) == 30
    other = next(row for row in found if row["trajectory"] == "(other)")
    assert other["steps"] is None and other["conversations"] == 30 - 2 - 19  # the shared one, 19 more
    kept = [row for row in found if row["trajectory"] != "(other)"]
    assert max(row["conversations"] for row in kept) == 2 and all(row["steps"] for row in kept)
    ranked = rows(warehouse, "SELECT rank, trajectory, conversations FROM daily_trajectories ORDER BY rank")
    assert [row["rank"] for row in ranked] == list(range(1, 22)) and ranked[-1]["trajectory"] == "(other)"
    named = [(-row["conversations"], row["trajectory"]) for row in ranked[:-1]]
    assert named == sorted(named) and named[0][0] == -2  # the shared trajectory first

    from pipelines.warehouse.queries import run_query

    columns, answer = run_query(warehouse, "trajectories", {"top": 3, "since": str(DAY)})
    shown = [dict(zip(columns, values, strict=True)) for values in answer]
    assert [row["trajectory"] for row in shown] == [row["trajectory"] for row in ranked[:3]]
    assert [row["share"] for row in shown] == [round(row["conversations"] / 30, 4) for row in ranked[:3]]


def test_a_load_makes_the_views_again_only_when_their_files_changed_or_one_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each view binds its tables when made (seconds a load at 12,000 partitions): a load whose
    SQL files are those the catalog was made with keeps it, unless a view was dropped."""
    from conversation_samples import APP, full_conversation
    from test_warehouse import DAY, write_partition

    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.lake.store import Lake
    from pipelines.warehouse import catalog

    lake = Lake(str(tmp_path / "lake"))
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    write_partition(lake, APP, DAY, [full_conversation("a")])

    def load_and_read(sql: str) -> object:
        load_conversation_partitions(lake, warehouse, [(APP, DAY)])
        with warehouse.connect(read_only=True) as conn:
            return conn.execute(sql).fetchone()[0]

    comment = "SELECT comment FROM duckdb_views() WHERE view_name = 'daily_costs'"
    described = load_and_read(comment)
    assert described
    with warehouse.connect() as conn:
        conn.execute("COMMENT ON VIEW daily_costs IS 'changed by hand'")
    assert load_and_read(comment) == "changed by hand"  # the same files: nothing made again
    with warehouse.connect() as conn:
        conn.execute("DROP VIEW turn_log")
    assert load_and_read("SELECT count(*) FROM turn_log") == 2  # a missing view: all made again
    assert load_and_read(comment) == described
    with warehouse.connect() as conn:
        conn.execute("COMMENT ON VIEW daily_costs IS 'changed by hand'")
    monkeypatch.setattr(catalog, "definition", lambda view_columns: "a newer release")
    assert load_and_read(comment) == described
