"""The whole pipeline through Dagster against the simulator over HTTP: ingest, re-ingest,
rebuild and evaluation runs, checked against counts computed independently from the corpus.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster_runs import run_app_job, run_partitions

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus import ConversationKey, conversation
from pipelines.config import Settings
from pipelines.definitions import build_definitions
from pipelines.orchestration.partitions import partition_key, register_apps
from pipelines.transform.schemas import ALL_TABLES
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import run_query

SCALE = SimulatorScale(
    seed=5, apps=2, days=2, conversations_per_day=10, max_turns=3, evaluation_runs_per_app=4
)
DAYS = [SCALE.start_date + timedelta(days=i) for i in range(SCALE.days)]


def expected_counts() -> Counter[str]:
    """Rows per table, counted straight from the corpus JSON (no flattener involved)."""
    counts: Counter[str] = Counter()
    kinds = {"toolCall": "tool_calls", "toolResponse": "tool_responses", "agentTransfer": "agent_transfers"}
    for app in range(SCALE.apps):
        for day in range(SCALE.days):
            for index in range(SCALE.conversations_per_day):
                item = conversation(SCALE, ConversationKey(app, day, index))
                counts["conversations"] += 1
                # The deprecated top-level messages repeat the turns' messages when there are turns.
                messages = [] if item.get("turns") else list(item.get("messages", []))
                counts["with_both"] += bool(item.get("turns") and item.get("messages"))
                for turn in item.get("turns", []):
                    counts["turns"] += 1
                    messages += turn.get("messages", [])
                    stack = [turn["rootSpan"]] if "rootSpan" in turn else []
                    while stack:
                        span = stack.pop()
                        counts["spans"] += 1
                        stack += span.get("childSpans", [])
                counts["messages"] += len(messages)
                for message in messages:
                    for chunk in message.get("chunks", []):
                        counts["chunks"] += 1
                        for key, table in kinds.items():
                            counts[table] += key in chunk
    return counts


def snapshot(warehouse: Warehouse) -> dict[str, list[tuple[Any, ...]]]:
    with warehouse.connect(read_only=True) as conn:
        return {
            spec.name: sorted(conn.execute(f"SELECT * FROM {spec.name}").fetchall(), key=repr)
            for spec in ALL_TABLES
            if spec.name != "evaluation_run_snapshots"
        }


def partition_metadata(instance: dg.DagsterInstance, asset: str) -> dict[str, dict[str, Any]]:
    """The metadata of each partition's newest materialization of `asset`, by partition key."""
    records = instance.fetch_materializations(dg.AssetKey(asset.split("/")), limit=1000).records
    found: dict[str, dict[str, Any]] = {}
    for record in records:  # newest first
        materialization = record.asset_materialization
        assert materialization is not None and materialization.partition is not None
        found.setdefault(materialization.partition, {k: v.value for k, v in materialization.metadata.items()})
    return found


@pytest.fixture
def pipeline_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with running_simulator(SimulatorConfig(scale=SCALE, summary_fraction=0.3)) as sim:
        monkeypatch.setenv("CES_MCP_URL", sim.url)
        monkeypatch.setenv("CES_APPS", ",".join(sim.apps))
        monkeypatch.setenv("CES_LAKE", str(tmp_path / "lake"))
        monkeypatch.setenv("CES_WAREHOUSE", str(tmp_path / "warehouse.duckdb"))
        monkeypatch.setenv("CES_MAX_RPS", "500")
        yield sim, Warehouse(str(tmp_path / "warehouse.duckdb"))


def test_ingest_twice_and_rebuild_hold_exactly_the_corpus(pipeline_env) -> None:
    sim, warehouse = pipeline_env
    instance = dg.DagsterInstance.ephemeral()

    partitions = [(app, day) for day in DAYS for app in sim.apps]
    outcomes = run_partitions("ingest_conversations", partitions, instance=instance)
    assert [o.error for o in outcomes] == [None] * 2  # a run per app, over both days
    assert sorted(o.label for o in outcomes) == sorted(f"{app} {DAYS[0]}…{DAYS[-1]}" for app in sim.apps)
    expected = expected_counts()
    assert expected["with_both"] > 0, "the corpus must hold conversations with turns and top-level messages"
    counts = warehouse.row_counts()
    for table in ("conversations", "turns", "messages", "chunks", "tool_calls", "tool_responses", "spans"):
        assert counts[table] == expected[table], table
    assert counts["agent_transfers"] == expected["agent_transfers"]
    assert counts["rejects"] == 0
    loaded = sum(o.value("warehouse__conversation_tables", "conversations_rows") for o in outcomes)
    assert loaded == expected["conversations"]
    assert sum(o.value("raw__conversation_pages", "conversations_hydrated") for o in outcomes) > 0
    assert all(o.value("raw__conversation_pages", "requests") > 0 for o in outcomes)
    # the simulator keeps no session, and no credentials were renewed
    for key in ("credential_refreshes", "session_initializations"):
        assert {o.value("raw__conversation_pages", key) for o in outcomes} == {0}, key
    # A run covers an app's two days: each day's materialization holds that day's rows, not the run's.
    tables = ("conversations", "turns", "messages", "chunks", "tool_calls", "spans", "rejects")
    app_of = {table: "regexp_extract(conversation_name, '^(.*)/conversations/', 1)" for table in tables}
    app_of["rejects"] = "app"
    with warehouse.connect(read_only=True) as conn:
        held = {
            (table, app, day): rows
            for table in tables
            for app, day, rows in conn.sql(
                f"SELECT {app_of[table]}, partition_date, count(*) FROM {table} GROUP BY ALL"
            ).fetchall()
        }
    for asset in ("lake/conversation_tables", "warehouse/conversation_tables"):
        found = partition_metadata(instance, asset)
        assert set(found) == {str(partition_key(app, day)) for app, day in partitions}
        for app, day in partitions:
            metadata = found[str(partition_key(app, day))]
            assert metadata["dagster/row_count"] == SCALE.conversations_per_day, asset
            for table in tables:
                assert metadata[f"{table}_rows"] == held.get((table, app, day), 0), (asset, table)
            assert (metadata["partitions"], metadata["first_day"]) == (SCALE.days, str(DAYS[0]))
    pages = partition_metadata(instance, "raw/conversation_pages")
    assert {metadata["conversations_listed"] for metadata in pages.values()} == {SCALE.conversations_per_day}
    first = snapshot(warehouse)

    again = run_partitions("ingest_conversations", partitions, instance=instance)
    assert all(o.success for o in again)
    assert snapshot(warehouse) == first

    rebuilt = run_partitions("rebuild_conversations", partitions, instance=instance)
    assert all(o.success for o in rebuilt)
    assert "raw__conversation_pages" not in rebuilt[0].metadata
    assert snapshot(warehouse) == first


def test_blocking_checks_run_with_the_ingest(pipeline_env) -> None:
    sim, _ = pipeline_env
    definitions = build_definitions(Settings.from_env())
    instance = dg.DagsterInstance.ephemeral()
    register_apps(instance, sim.apps)
    job = definitions.resolve_job_def("ingest_conversations")
    result = job.execute_in_process(partition_key=partition_key(sim.apps[0], DAYS[0]), instance=instance)
    evaluations = {
        (e.asset_key.to_user_string(), e.check_name): e.passed for e in result.get_asset_check_evaluations()
    }
    assert evaluations[("lake/conversation_tables", "rows_in_partition")] is True
    assert evaluations[("warehouse/conversation_tables", "spans_have_parents")] is True
    assert evaluations[("warehouse/conversation_tables", "no_negative_durations")] is True
    assert evaluations[("warehouse/conversation_tables", "unique_keys_conversations")] is True
    assert evaluations[("warehouse/conversation_tables", "turn_counts_agree")] is True


def test_evaluation_runs_are_loaded_with_consistent_counts(pipeline_env) -> None:
    sim, warehouse = pipeline_env
    outcomes = run_app_job("ingest_evaluation_runs", sim.apps, instance=dg.DagsterInstance.ephemeral())
    assert [o.error for o in outcomes] == [None] * SCALE.apps
    for outcome in outcomes:
        assert (
            outcome.value("warehouse__evaluation_tables", "evaluation_runs_rows")
            == SCALE.evaluation_runs_per_app
        )
    with warehouse.connect(read_only=True) as conn:
        states = dict(conn.execute("SELECT state, count(*) FROM evaluation_runs GROUP BY state").fetchall())
        assert sum(states.values()) == SCALE.apps * SCALE.evaluation_runs_per_app
        inconsistent = conn.execute(
            """
            SELECT r.evaluation_run_name
            FROM evaluation_runs AS r
            JOIN (
                SELECT evaluation_run_name, sum(passed_count) AS passed, sum(failed_count) AS failed
                FROM evaluation_run_summaries GROUP BY ALL
            ) AS s USING (evaluation_run_name)
            WHERE s.passed <> r.passed_count OR s.failed <> r.failed_count
            """
        ).fetchall()
        assert inconsistent == []
        snapshots = conn.execute("SELECT count(*) FROM evaluation_run_snapshots").fetchone()[0]
        assert snapshots == SCALE.apps * SCALE.evaluation_runs_per_app

        # Why each completed result passed or failed: a golden one's turns, a scenario's verdicts.
        def one(sql: str) -> object:
            return conn.execute(sql).fetchone()[0]

        missing_details = one(
            """
            SELECT count(*) FROM evaluation_results AS r
            WHERE r.execution_state = 'COMPLETED' AND NOT EXISTS (
                SELECT 1 FROM evaluation_turn_replays t
                WHERE t.evaluation_result_name = r.evaluation_result_name
                UNION ALL
                SELECT 1 FROM evaluation_scenario_results s
                WHERE s.evaluation_result_name = r.evaluation_result_name
            )
            """
        )
        assert missing_details == 0 and one("SELECT count(*) FROM evaluation_turn_replays") > 0
        assert one("SELECT count(*) FROM evaluation_scenario_results") > 0
        unexplained_failures = one(
            """
            SELECT count(*) FROM evaluation_results AS r
            WHERE r.evaluation_status = 'FAIL' AND NOT EXISTS (
                SELECT 1 FROM evaluation_expectation_outcomes o
                WHERE o.evaluation_result_name = r.evaluation_result_name AND o.outcome = 'FAIL'
            )
            """
        )
        assert unexplained_failures == 0
        assert set(one("SELECT list(DISTINCT outcome) FROM evaluation_expectation_outcomes")) == {
            "PASS",
            "FAIL",
            "SKIPPED",
        }
        assert set(one("SELECT list(DISTINCT span_type) FROM evaluation_result_latencies")) == {
            None,
            "TOOL",
            "USER_CALLBACK",
            "GUARDRAIL",
            "LLM",
        }
        metrics = set(one("SELECT list(DISTINCT metric) FROM evaluation_scores"))
        assert metrics == {
            "semantic_similarity",
            "hallucination",
            "tool_invocation",
            "tool_ordered_invocation",
            "overall_tool_invocation",
            "task_completion",
            "user_goal_satisfaction",
            "rubric",
        }
    # No conversation is ingested here: the warehouse cannot hold those the results replayed,
    # and no check looks for them.
    assert [o.failed_checks for o in outcomes] == [[]] * SCALE.apps


def test_each_evaluation_failure_drills_down_to_the_turn_it_replayed(pipeline_env) -> None:
    """With the EVAL conversations ingested beside the evaluation runs, every failure of the
    newest run names a loaded conversation, and a golden failure's slowest span is that turn's."""
    sim, warehouse = pipeline_env
    instance = dg.DagsterInstance.ephemeral()
    partitions = [(app, day) for app in sim.apps for day in DAYS]
    assert all(o.success for o in run_partitions("ingest_conversations", partitions, instance=instance))
    loads = run_app_job("ingest_evaluation_runs", sim.apps, instance=instance)
    assert [(o.success, o.failed_checks) for o in loads] == [(True, [])] * SCALE.apps  # conversations in
    with warehouse.connect(read_only=True) as conn:
        cursor = conn.execute("SELECT * FROM evaluation_failures")
        columns = [column for column, *_ in cursor.description]
        failures = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        loaded = {name for (name,) in conn.execute("SELECT conversation_name FROM conversations").fetchall()}
        assert {f["failure_kind"] for f in failures} == {"expectation", "score", "expectation_result"}
        for failure in failures:
            assert failure["conversation_name"] in loaded, failure
            assert failure["conversation_loaded"], failure
            if failure["turn_index"] is None:
                continue
            slowest = conn.execute(
                "SELECT max(duration_seconds) FROM spans "
                "WHERE conversation_name = ? AND turn_index = ? AND depth > 0",  # below the turn's root
                [failure["conversation_name"], failure["turn_index"]],
            ).fetchone()[0]
            assert failure["slowest_span_seconds"] == slowest
        newest = dict(
            conn.execute(
                "SELECT app, max_by(evaluation_run_name, create_time) FROM evaluation_runs "
                "WHERE state = 'COMPLETED' GROUP BY app"
            ).fetchall()
        )
    golden = [f for f in failures if f["turn_index"] is not None]
    assert golden and all(f["turn_latency_seconds"] > 0 for f in golden)
    # The named query: one run (by its id), else each app's newest completed run.
    run = failures[0]["evaluation_run_name"]
    named, rows = run_query(warehouse, "evaluation_failures", {"run": run.split("/")[-1]})
    assert len(rows) == sum(f["evaluation_run_name"] == run for f in failures)
    assert {row[named.index("evaluation_run_name")] for row in rows} == {run}
    named, rows = run_query(warehouse, "evaluation_failures", {})
    assert {row[named.index("evaluation_run_name")] for row in rows} <= set(newest.values())
    assert len(rows) == sum(f["evaluation_run_name"] in newest.values() for f in failures)
