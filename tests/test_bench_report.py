"""The benchmark's report: rebuild and DuckDB are run in turn, and the round reported is the
one whose ratio is the median, so one slow moment of the machine does not decide it."""

from __future__ import annotations

from typing import Any

from bench.run import _median_round


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
