"""Each data check passes on good data and fails, with figures, on purpose-made bad data."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg
import duckdb
import pytest
import trend_samples as samples
from conversation_samples import APP, full_conversation
from dagster_runs import run_app_job, run_partitions
from raw_tables import editable_tables
from test_flatten_evaluations import completed_run
from test_warehouse import DAY, NEXT_DAY, write_partition

from pipelines.ces.tools import GET_EVALUATION_RUN, LIST_CONVERSATIONS
from pipelines.config import OrchestrationSettings
from pipelines.ingest.evaluations import (
    EVALUATION_RUNS_DATASET,
    EvaluationObservation,
    load_evaluation_observation,
)
from pipelines.ingest.flatten import CONVERSATIONS_DATASET
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.checks import rows_outside_partition
from pipelines.lake.store import Lake
from pipelines.orchestration.checks import conversation_check_results, regression_gate_result
from pipelines.orchestration.evaluation_assets import REPLAY_RUN_CONFIG
from pipelines.orchestration.resources import RegressionGateResource
from pipelines.transform.schemas import (
    CONVERSATION_TABLES,
    CONVERSATIONS,
    EVALUATION_RESULTS,
    EVALUATION_RUN_SNAPSHOTS,
    EVALUATION_RUN_SUMMARIES,
    EVALUATION_RUN_TABLES,
    SPANS,
    TURNS,
)
from pipelines.warehouse import checks
from pipelines.warehouse.duck import Warehouse


@pytest.fixture
def loaded(tmp_path: Path) -> Warehouse:
    lake = Lake(str(tmp_path / "lake"))
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b")])
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    return warehouse


@pytest.mark.parametrize("shadowed", [False, True], ids=["all-parts", "scope-parts"])
def test_all_checks_pass_on_loaded_data(loaded: Warehouse, shadowed: bool) -> None:
    with loaded.connect(read_only=True) as conn:
        scope = checks.scope_partitions(conn, [APP], DAY, DAY, loaded.parts_root if shadowed else None)
        for spec in CONVERSATION_TABLES:
            assert checks.run_check(conn, "duplicate_keys", scope, spec).passed, spec.name
        assert checks.run_check(conn, "orphan_spans", scope).passed
        assert checks.run_check(conn, "negative_durations", scope).passed
        assert checks.run_check(conn, "turn_count_mismatches", scope).passed
        freshness = checks.newest_conversation(conn, APP)
        assert (
            freshness.newest_start == datetime(2026, 11, 1, 10, tzinfo=UTC) and freshness.conversations == 2
        )
        assert freshness.age_hours(datetime(2026, 11, 1, 12, tzinfo=UTC)) == 2.0


def test_checks_on_their_partitions_parts_see_them_and_each_apps_newest_day(tmp_path: Path) -> None:
    """A load's checks read views of its partitions' parts alone (and of the app's newest day,
    where freshness looks): the other days are not bound, nor seen."""
    lake = Lake(str(tmp_path / "lake"))
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    third = NEXT_DAY + timedelta(days=1)
    write_partition(lake, APP, DAY, [full_conversation("a"), full_conversation("b")])
    write_partition(lake, APP, NEXT_DAY, [full_conversation("c", start="2026-11-02T08:00:00Z")])
    write_partition(lake, APP, third, [full_conversation("d", start="2026-11-03T09:00:00Z")])
    load_conversation_partitions(lake, warehouse, [(APP, DAY), (APP, NEXT_DAY), (APP, third)])
    with warehouse.connect(read_only=True) as conn:
        (spans,) = conn.execute("SELECT count(*) FROM spans").fetchone()
        scope = checks.scope_partitions(conn, [APP], DAY, DAY, warehouse.parts_root)
        seen = conn.execute("SELECT DISTINCT partition_date FROM conversations ORDER BY 1").fetchall()
        assert seen == [(DAY,), (third,)]
        assert conn.execute("SELECT count(*) FROM spans").fetchone() == (spans * 3 // 4,)
        assert checks.run_check(conn, "orphan_spans", scope).passed
        freshness = checks.newest_conversation(conn, APP)
    assert freshness.newest_start == datetime(2026, 11, 3, 9, tzinfo=UTC) and freshness.conversations == 4


def _freshness(conn: duckdb.DuckDBPyConnection, last: date, hours: float) -> dg.AssetCheckResult:
    results = conversation_check_results(conn, [APP], DAY, last, freshness_hours=hours)
    return next(result for result in results if result.check_name == "conversations_are_fresh")


def test_freshness_is_judged_at_the_end_of_the_days_loaded_or_now(loaded: Warehouse) -> None:
    """Past days (a rebuild, the demo) are fresh if their last hours hold conversations; a window
    reaching today (the schedule's) warns when the app has gone quiet."""
    with loaded.connect(read_only=True) as conn:
        past = _freshness(conn, DAY, 48)  # newest start 10:00, judged at the next midnight
        quiet_last_day = _freshness(conn, DAY, 12)
        today = _freshness(conn, datetime.now(UTC).date(), 48)
    assert past.passed and past.metadata["age_hours"].data == {APP: 14.0}
    assert past.metadata["as_of"].text == "2026-11-02T00:00:00+00:00"
    assert past.description is None
    assert not quiet_last_day.passed
    app = APP.rsplit("/", 1)[-1]  # what the command line shows of a warning check: what it found
    said = f"as of 2026-11-02 00:00 UTC, {app}: newest 14 h old (CES_FRESHNESS_HOURS=12)"
    assert quiet_last_day.description == said
    assert not today.passed and today.metadata["age_hours"].data[APP] > 48
    assert today.severity == dg.AssetCheckSeverity.WARN


def test_duplicate_keys_are_counted_with_a_sample(loaded: Warehouse) -> None:
    with loaded.connect() as conn:
        editable_tables(conn)
        conn.execute("INSERT INTO turns SELECT * FROM turns WHERE turn_index = 0")
        scope = checks.scope_partitions(conn, [APP], DAY, DAY)
        outcome = checks.run_check(conn, "duplicate_keys", scope, TURNS)
        assert outcome.failures == 2
        assert {"conversation_name": f"{APP}/conversations/a", "turn_index": 0} in outcome.sample
        assert checks.run_check(conn, "duplicate_keys", scope, CONVERSATIONS).passed


def test_orphan_spans_fail(loaded: Warehouse) -> None:
    with loaded.connect() as conn:
        editable_tables(conn)
        conn.execute("DELETE FROM spans WHERE name = 'LLM' AND conversation_name LIKE '%/a'")
        scope = checks.scope_partitions(conn, [APP], DAY, DAY)
        outcome = checks.run_check(conn, "orphan_spans", scope)
        assert outcome.failures == 1 and outcome.sample[0]["parent_span_id"] == 1
        assert checks.run_check(conn, "duplicate_keys", scope, SPANS).passed


def test_negative_durations_fail(loaded: Warehouse) -> None:
    with loaded.connect() as conn:
        editable_tables(conn)
        conn.execute("UPDATE spans SET duration_seconds = -0.5 WHERE name = 'TTS'")
        conn.execute("UPDATE conversations SET duration_seconds = -1 WHERE conversation_id = 'a'")
        scope = checks.scope_partitions(conn, [APP], DAY, DAY)
        outcome = checks.run_check(conn, "negative_durations", scope)
        assert outcome.failures == 3
        assert {row["table_name"] for row in outcome.sample} == {"spans", "conversations"}


def test_negative_durations_and_latencies_ces_sent_load_and_warn_run_after_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A negative span duration and a negative latency percentile are values CES sent (a protobuf
    Duration is signed): each load keeps them, succeeds and warns, naming them, and so does every
    later load of the same partition and app (the latencies are checked over all of an app's runs)."""
    monkeypatch.setenv("CES_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("CES_WAREHOUSE", str(tmp_path / "w.duckdb"))
    lake = Lake(str(tmp_path / "lake"))
    skewed = full_conversation("skewed")
    skewed["turns"][0]["rootSpan"]["childSpans"][-1]["duration"] = "-0.25s"  # its TTS span
    page = {"conversations": [skewed, full_conversation("b")]}
    fetched = "2026-11-02T00:00:00Z"
    lake.write_raw(
        CONVERSATIONS_DATASET,
        APP,
        DAY,
        [{"tool": LIST_CONVERSATIONS, "arguments": {"parent": APP}, "result": page, "fetched_at": fetched}],
    )
    run = completed_run()
    run["latencyReport"]["llmCallLatencies"][0]["latencyMetrics"]["p99Latency"] = "-0.5s"
    record = {
        "tool": GET_EVALUATION_RUN,
        "arguments": {"name": run["name"]},
        "result": run,
        "fetched_at": fetched,
    }
    lake.write_observation(EVALUATION_RUNS_DATASET, APP, "20261102T000000000000Z", [record])
    instance, replay = dg.DagsterInstance.ephemeral(), REPLAY_RUN_CONFIG.to_config_dict()
    for _ in range(2):
        (conversations,) = run_partitions("rebuild_conversations", [(APP, DAY)], instance=instance)
        (evaluations,) = run_app_job("rebuild_evaluation_runs", [APP], instance=instance, run_config=replay)
        assert conversations.success and evaluations.success, (conversations.error, evaluations.error)
        assert conversations.failed_checks == ["warehouse/conversation_tables:no_negative_durations (WARN)"]
        found = conversations.found_by_checks["warehouse/conversation_tables:no_negative_durations"]
        assert found.startswith("1 found") and f"{APP}/conversations/skewed" in found and "-0.25" in found
        assert "warehouse/evaluation_tables:no_negative_latencies (WARN)" in evaluations.failed_checks
        assert not [check for check in evaluations.failed_checks if "(ERROR)" in check]
    with Warehouse(str(tmp_path / "w.duckdb")).connect(read_only=True) as conn:
        spans = "SELECT duration_seconds FROM spans WHERE conversation_name = ? AND name = 'TTS'"
        assert conn.execute(spans, [f"{APP}/conversations/skewed"]).fetchall() == [(-0.25,)]
        latencies = "SELECT p99_seconds FROM evaluation_run_latencies WHERE kind = 'llm_call'"
        assert conn.execute(latencies).fetchall() == [(-0.5,)]


def test_turn_count_mismatches_are_reported(loaded: Warehouse) -> None:
    with loaded.connect() as conn:
        editable_tables(conn)
        conn.execute("UPDATE conversations SET turn_count = 5 WHERE conversation_id = 'b'")
        scope = checks.scope_partitions(conn, [APP], DAY, DAY)
        outcome = checks.run_check(conn, "turn_count_mismatches", scope)
        assert outcome.failures == 1
        assert outcome.sample[0]["turn_count"] == 5 and outcome.sample[0]["turns_loaded"] == 2


def test_checks_look_only_at_their_partition(loaded: Warehouse) -> None:
    with loaded.connect() as conn:
        editable_tables(conn)
        conn.execute("INSERT INTO turns SELECT * FROM turns")
        scope = checks.scope_partitions(conn, [APP], DAY, DAY)
        assert checks.run_check(conn, "duplicate_keys", scope, TURNS).failures == 4
        scope = checks.scope_partitions(conn, [APP], date(2026, 11, 2), date(2026, 11, 2))
        assert checks.run_check(conn, "duplicate_keys", scope, TURNS).passed
        scope = checks.scope_partitions(conn, ["projects/p1/locations/us/apps/other"], DAY, DAY)
        assert checks.run_check(conn, "duplicate_keys", scope, TURNS).passed


def test_conversation_checks_read_only_the_days_they_check(tmp_path: Path) -> None:
    """A check costs its run's days, not the history: with another day's parts made unreadable,
    every check of a day still runs (opening one would fail), and freshness reads only the app's
    newest day. (A view opens its first part, the earliest day's, for the columns.)"""
    lake = Lake(str(tmp_path / "lake"))
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    first, later = DAY - timedelta(days=1), NEXT_DAY

    def load(day: date, name: str) -> None:
        write_partition(lake, APP, day, [full_conversation(name, start=f"{day.isoformat()}T09:00:00Z")])
        load_conversation_partitions(lake, warehouse, [(APP, day)])

    def spoil_parts(day: date) -> None:
        for spec in CONVERSATION_TABLES:  # the day's (a rollup's part of its month stays whole)
            for part in warehouse.parts_root.glob(
                f"{spec.name}/*/partition_date={day.isoformat()}/*.parquet"
            ):
                part.write_bytes(b"not Parquet")

    for day, name in ((first, "z"), (DAY, "a"), (later, "b")):
        load(day, name)
    spoil_parts(later)
    with warehouse.connect(read_only=True) as conn:
        scope = checks.scope_partitions(conn, [APP], DAY, DAY)
        outcomes = [checks.run_check(conn, "duplicate_keys", scope, spec) for spec in CONVERSATION_TABLES]
        outcomes += [checks.run_check(conn, name, scope) for name in SCOPED_CHECKS]
        assert all(outcome.passed for outcome in outcomes)
        with pytest.raises(duckdb.InvalidInputException):  # what reading the spoiled day would do
            conn.execute("SELECT count(*) FROM spans").fetchall()
    load(later, "b")
    spoil_parts(DAY)
    with warehouse.connect(read_only=True) as conn:
        freshness = checks.newest_conversation(conn, APP)
        assert freshness.newest_start == datetime(2026, 11, 2, 9, tzinfo=UTC) and freshness.conversations == 3
        assert checks.newest_conversation(conn, "projects/p/locations/us/apps/none") == checks.Freshness(
            None, 0
        )


SCOPED_CHECKS = ("orphan_spans", "negative_durations", "turn_count_mismatches")


def test_evaluation_checks(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_evaluation_observation(warehouse, APP, EvaluationObservation(runs=[(completed_run(), 1)]), DAY)
    with warehouse.connect() as conn:
        for spec in (*EVALUATION_RUN_TABLES, EVALUATION_RUN_SNAPSHOTS, EVALUATION_RESULTS):
            assert checks.run_check(conn, "duplicate_run_keys", {"app": APP}, spec).passed, spec.name
        assert checks.run_check(conn, "negative_latencies", {"app": APP}).passed
        conn.execute("INSERT INTO evaluation_run_summaries SELECT * FROM evaluation_run_summaries LIMIT 1")
        conn.execute("UPDATE evaluation_run_latencies SET p99_seconds = -1 WHERE kind = 'llm_call'")
        assert (
            checks.run_check(conn, "duplicate_run_keys", {"app": APP}, EVALUATION_RUN_SUMMARIES).failures == 1
        )
        other = {"app": "projects/p/locations/l/apps/x"}
        assert checks.run_check(conn, "duplicate_run_keys", other, EVALUATION_RUN_SUMMARIES).passed
        outcome = checks.run_check(conn, "negative_latencies", {"app": APP})
        assert outcome.failures == 1 and outcome.sample[0]["kind"] == "llm_call"


def test_implausible_evaluation_results_load_and_are_counted(loaded: Warehouse, tmp_path: Path) -> None:
    """A score out of range, an outcome this version does not know, a replayed conversation the
    warehouse lacks: the result loads with what it has, and the check counts each; a replayed
    conversation where the warehouse holds the app's conversations from the run's creation to a
    day after the result's (a run makes those it replays as its results run: before the next
    ingest, or of days never ingested, none can be loaded)."""
    run = completed_run()  # created 2026-11-02T03:00, after the conversations loaded (2026-11-01)
    loaded_conversation = f"{APP}/conversations/a"
    result = {
        "name": f"{APP}/evaluations/e1/results/r1",
        "evaluationRun": run["name"],
        "createTime": "2026-11-02T03:10:00Z",
        "goldenResult": {
            "turnReplayResults": [
                {
                    "conversation": loaded_conversation,
                    "semanticSimilarityResult": {"score": 4},
                    "toolInvocationScore": 1.5,
                    "expectationOutcome": [{"outcome": "PARTIAL"}, {"outcome": "PASS"}],
                },
                {"conversation": f"{APP}/conversations/gone", "toolInvocationScore": 0.5},
            ]
        },
    }
    older = {**run, "name": f"{APP}/evaluationRuns/older", "createTime": "2026-10-31T23:00:00Z"}
    older_result = {  # of a run before the oldest day loaded: a window not ingested
        "name": f"{APP}/evaluations/e1/results/r0",
        "evaluationRun": older["name"],
        "createTime": "2026-10-31T23:10:00Z",
        "goldenResult": {"turnReplayResults": [{"conversation": f"{APP}/conversations/not-ingested"}]},
    }
    observation = EvaluationObservation(runs=[(run, 1), (older, 1)], results=[result, older_result])
    rows = load_evaluation_observation(loaded, APP, observation, DAY)
    assert rows["evaluation_results"] == 2 and rows["rejects"] == 0

    def found() -> list[tuple[str, str]]:
        with loaded.connect(read_only=True) as conn:
            loaded_from, loaded_until = checks.loaded_span(conn, APP, loaded.scoped_parts_root)
            params = {"app": APP, "loaded_from": loaded_from, "loaded_until": loaded_until}
            outcome = checks.run_check(conn, "evaluation_result_anomalies", params)
        assert outcome.failures == len(outcome.sample)
        return sorted((item["anomaly"], item["detail"]) for item in outcome.sample)

    implausible = [("score out of range", "tool_invocation = 1.5"), ("unknown outcome", "PARTIAL")]
    assert found() == implausible
    lake = Lake(str(tmp_path / "lake"))
    # Conversations loaded from after the run's creation, but not yet a day after its result's.
    write_partition(lake, APP, NEXT_DAY, [full_conversation("c", start="2026-11-02T09:00:00Z")])
    load_conversation_partitions(lake, loaded, [(APP, NEXT_DAY)])
    assert found() == implausible
    day_after = NEXT_DAY + timedelta(days=1)
    write_partition(lake, APP, day_after, [full_conversation("d", start="2026-11-03T09:00:00Z")])
    load_conversation_partitions(lake, loaded, [(APP, day_after)])
    assert found() == [("conversation not loaded", f"{APP}/conversations/gone"), *implausible]


def test_rows_outside_their_partition_are_found(tmp_path: Path) -> None:
    lake = Lake(str(tmp_path / "lake"))
    write_partition(
        lake, APP, DAY, [full_conversation("a"), full_conversation("late", start="2026-11-02T00:00:00Z")]
    )
    assert rows_outside_partition(lake, "conversations", "start_time", APP, DAY) == 1
    write_partition(lake, APP, DAY, [full_conversation("a")])
    assert rows_outside_partition(lake, "conversations", "start_time", APP, DAY) == 0
    write_partition(lake, APP, date(2026, 11, 3), [])
    assert rows_outside_partition(lake, "conversations", "start_time", APP, date(2026, 11, 3)) == 0


def test_the_regression_gate_fails_with_what_regressed_and_respects_its_thresholds(tmp_path: Path) -> None:
    """The trend sample's support app: run 3 against run 2 lost refund's pass rate (0.8 → 0.4),
    hallucinated (mean 0 → 1) and answered its golden turn slower (1 s → 2.5 s)."""
    _, warehouse = samples.build_warehouse(tmp_path)
    gate = RegressionGateResource.from_settings(OrchestrationSettings(regression_severity="error"))
    with warehouse.connect(read_only=True) as conn:
        result = regression_gate_result(conn, gate.query_params(samples.SUPPORT), gate.severity)
        assert not result.passed and result.severity == dg.AssetCheckSeverity.ERROR
        assert result.metadata["regressed"].value == [
            "refund pass_rate: 0.8 → 0.4",
            "hallucination mean_score: 0 → 1",
            "golden turn latency p90_seconds: 1 → 2.5",
        ]
        assert result.metadata["latest_run"].value == f"{samples.SUPPORT}/evaluationRuns/run-3"
        assert result.description == (  # what `ces-pipeline ingest` says of the app, three changes at most
            "run run-3 against run-2: refund pass_rate: 0.8 → 0.4; hallucination mean_score: 0 → 1; "
            "golden turn latency p90_seconds: 1 → 2.5"
        )
        lenient = RegressionGateResource(pass_rate_points=50, score_pct=10, latency_pct=200, severity="warn")
        result = regression_gate_result(conn, lenient.query_params(samples.SUPPORT), lenient.severity)
        assert result.metadata["regressed"].value == ["hallucination mean_score: 0 → 1"]
        assert result.severity == dg.AssetCheckSeverity.WARN
        assert result.description == "run run-3 against run-2: hallucination mean_score: 0 → 1"
        # sales has one completed run: nothing to compare, nothing regressed
        passed = regression_gate_result(conn, gate.query_params(samples.SALES), gate.severity)
        assert passed.passed and passed.description is None
