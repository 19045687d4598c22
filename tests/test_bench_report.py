"""The benchmark's report: rebuild and DuckDB are run in turn, and the round reported is the
one whose ratio is the median, so one slow moment of the machine does not decide it."""

from __future__ import annotations

from typing import Any

from bench.run import _median_round
from bench.scale_report import checks


def pair(rebuild: float, duckdb: float) -> dict[str, Any]:
    return {
        "rebuild": {"conversations_per_second": rebuild, "seconds": 20_000 / rebuild},
        "duckdb": {"conversations_per_second": duckdb, "seconds": 20_000 / duckdb},
    }


def test_the_round_with_the_median_ratio_is_reported_with_every_rounds_figures() -> None:
    rounds = [pair(2_600, 2_000), pair(2_400, 2_400), pair(2_200, 1_600)]  # 1.30x, 1.00x, 1.375x

    reported = _median_round(rounds)

    assert reported["rebuild"]["conversations_per_second"] == 2_600
    assert reported["duckdb"]["conversations_per_second"] == 2_000
    assert [round(r["ratio"], 3) for r in reported["rounds"]] == [1.3, 1.0, 1.375]


def test_an_even_number_of_rounds_reports_the_lower_middle() -> None:
    reported = _median_round([pair(2_000, 1_000), pair(1_000, 1_000)])
    assert reported["rebuild"]["conversations_per_second"] == 1_000
    assert _median_round([pair(2_000, 1_000)])["rebuild"]["conversations_per_second"] == 2_000


def scale_size(query_seconds: float, app_query_seconds: float) -> dict[str, Any]:
    """One size of the scale bench: every figure but the queries' the same as at the base."""
    day = {"seconds": 2.5, "peak_rss_mb": 350.0, "disk_written_mb": 0.5, "partition_bytes": 2**20}
    return {
        "rebuild": {"conversations_per_second": 700.0},
        "one_day": day,
        "hourly": {"seconds": 4.0, "peak_rss_mb": 390.0},
        "queries": {"span_latency": {"seconds": query_seconds, "rows": 87_000}},
        "app_queries": {"span_latency": {"seconds": app_query_seconds, "rows": 435}},
        "report": {"seconds": 1.0, "peak_rss_mb": 200.0},
        "mcp": {},
    }


def test_a_query_for_one_app_is_checked_apart_from_its_answer_over_every_app() -> None:
    base = scale_size(0.24, 0.23)
    found = {c["measure"]: c for c in checks(scale_size(0.49, 0.25), base)}
    assert not found["`query span_latency`"]["met"]  # 2.04x the base: every app's rows
    assert found["`query span_latency`"]["measured"] == "0.49 s, 87,000 rows"  # the answer's size shown
    one_app = found["`query span_latency`, one app"]
    assert one_app["met"] and round(one_app["ratio"], 2) == 1.09
    assert one_app["measured"] == "0.25 s, 435 rows"
    assert not {c["measure"]: c for c in checks(scale_size(0.24, 0.40), base)}[
        "`query span_latency`, one app"
    ]["met"]
