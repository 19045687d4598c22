"""evaluation_tool_trajectories matches the tools a replayed turn called against those its
expectations name: exact, in order (others between), any order (as often), or none; from the
conversation's tool calls when the warehouse holds it, else from what the result reports."""

from __future__ import annotations

from datetime import UTC, date, datetime

import duckdb
import pytest

from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import ALL_TABLES
from pipelines.warehouse import analysis, catalog
from pipelines.warehouse.queries import named_query

APP = "projects/p/locations/l/apps/a"
RUN = f"{APP}/evaluationRuns/r"
RUN_DAY = date(2026, 11, 2)  # the replays' conversations start that day, as the run's do
A, B, C = (f"{APP}/tools/{tool}" for tool in "abc")
CASES = {  # result id: (expected, calls of the replayed turn, or None: conversation not loaded)
    "exact": ([A, B], [A, B]),
    "in-order": ([A, B], [A, C, B]),
    "any-order": ([A, B], [B, A]),
    "missing": ([A, B], [A]),
    "twice": ([A, A], [A, B]),  # any order counts how often
    "reported": ([A, B], None),
}


def _insert(conn: duckdb.DuckDBPyConnection, table: str, **values: object) -> None:
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values()))


@pytest.fixture
def conn() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    for spec in ALL_TABLES:
        conn.execute(sql_text(f"tables/{spec.name}.sql"))
    _insert(
        conn,
        "evaluation_runs",
        evaluation_run_name=RUN,
        app=APP,
        create_time=datetime(2026, 11, 2, 9, tzinfo=UTC),
        observed_at=datetime(2026, 11, 2, 10, tzinfo=UTC),
    )
    for case, (expected, calls) in CASES.items():
        result = f"{APP}/evaluations/e/results/{case}"
        conversation = f"{APP}/conversations/{case}"
        _insert(
            conn,
            "evaluation_results",
            evaluation_result_name=result,
            evaluation_run_name=RUN,
            evaluation_name=f"{APP}/evaluations/e",
            evaluation_status="PASS" if case == "exact" else "FAIL",
        )
        _insert(
            conn,
            "evaluation_turn_replays",
            evaluation_result_name=result,
            turn_index=1,
            conversation_name=conversation,
        )
        for index, tool in enumerate(expected):
            observed = tool if calls is None else None
            _insert(
                conn,
                "evaluation_expectation_outcomes",
                evaluation_result_name=result,
                evaluation_run_name=RUN,
                outcome_index=index,
                turn_index=1,
                expectation_kind="tool_call",
                expected_tool=tool,
                observed_tool=observed,
                outcome="PASS" if case == "exact" else "FAIL",
            )
        _insert(  # a response expectation names its tool too: not a call to match
            conn,
            "evaluation_expectation_outcomes",
            evaluation_result_name=result,
            outcome_index=len(expected),
            turn_index=1,
            expectation_kind="tool_response",
            expected_tool=expected[0],
            outcome="PASS",
        )
        if calls is not None:
            _insert(conn, "conversations", conversation_name=conversation, app=APP, partition_date=RUN_DAY)
            _insert(
                conn,
                "tool_calls",
                conversation_name=conversation,
                partition_date=RUN_DAY,
                turn_index=0,
                message_index=0,
                chunk_index=0,
                tool=C,
            )
            for index, tool in enumerate(calls):
                _insert(
                    conn,
                    "tool_calls",
                    conversation_name=conversation,
                    partition_date=RUN_DAY,
                    turn_index=1,
                    message_index=1,
                    chunk_index=index,
                    tool=tool,
                )
    scenario, conversation = f"{APP}/evaluations/s/results/scenario", f"{APP}/conversations/scenario"
    _insert(  # a scenario's expectations hold over its whole conversation (turn_index NULL)
        conn,
        "evaluation_results",
        evaluation_result_name=scenario,
        evaluation_run_name=RUN,
        evaluation_name=f"{APP}/evaluations/s",
        evaluation_status="PASS",
    )
    _insert(
        conn,
        "evaluation_scenario_results",
        evaluation_result_name=scenario,
        evaluation_run_name=RUN,
        conversation_name=conversation,
    )
    for index, tool in enumerate([C, A]):
        _insert(
            conn,
            "evaluation_expectation_outcomes",
            evaluation_result_name=scenario,
            evaluation_run_name=RUN,
            outcome_index=index,
            expectation_kind="tool_call",
            expected_tool=tool,
            outcome="PASS",
        )
    _insert(conn, "conversations", conversation_name=conversation, app=APP, partition_date=RUN_DAY)
    for turn, tool in enumerate([C, A, B]):
        _insert(
            conn,
            "tool_calls",
            conversation_name=conversation,
            partition_date=RUN_DAY,
            turn_index=turn,
            message_index=1,
            chunk_index=0,
            tool=tool,
        )
    analysis.create_tables(conn)
    catalog.install(conn)  # the views, and the rollups computed from the rows above
    return conn


def test_each_kind_of_match_is_told_apart(conn: duckdb.DuckDBPyConnection) -> None:
    found = {
        name.rsplit("/", 1)[-1]: (match, observed, source)
        for name, match, observed, source in conn.execute(
            "SELECT evaluation_result_name, tool_match, observed, observed_from "
            "FROM evaluation_tool_trajectories"
        ).fetchall()
    }
    assert {case: match for case, (match, _, _) in found.items()} == {
        "exact": "exact",
        "in-order": "in_order",
        "any-order": "any_order",
        "missing": "none",
        "twice": "none",
        "reported": "exact",
        "scenario": "in_order",
    }
    assert found["in-order"][1] == [A, C, B]  # the turn's calls only, not turn 0's
    assert found["reported"][1:] == ([A, B], "result")
    assert found["scenario"][1] == [C, A, B]  # every turn's calls, in order
    assert {source for case, (_, _, source) in found.items() if case != "reported"} == {"conversation"}


def test_the_pass_rate_query_counts_each_kind(conn: duckdb.DuckDBPyConnection) -> None:
    columns, rows = named_query("evaluation_tool_match").execute(conn, {})
    by_match = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    assert list(by_match) == ["exact", "in_order", "any_order", "none"]
    assert {match: row["turns"] for match, row in by_match.items()} == {
        "exact": 2,
        "in_order": 2,
        "any_order": 1,
        "none": 2,
    }
    assert by_match["exact"]["turn_pass_rate"] == 0.5 and by_match["exact"]["result_pass_rate"] == 0.5
    assert by_match["none"]["turns_passed"] == 0
