"""The dashboard: one self-contained HTML file, rendered by headless Chromium with no network and
no console message; the report/dashboard asset and the condition that regenerates it."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

import dagster as dg
import pytest
import trend_samples as samples
from plotly.offline import get_plotlyjs
from report_browser import ensure_chromium, visit

from pipelines.config import Settings, StorageSettings
from pipelines.orchestration.partitions import APP_PARTITIONS
from pipelines.orchestration.report_assets import REPORT_KEY, dashboard, report_after_loads_sensor
from pipelines.orchestration.resources import WarehouseResource
from pipelines.report import ReportError, write_report
from pipelines.report.charts import QUERIES
from pipelines.report.data import read_report_data
from pipelines.warehouse.duck import NoWarehouseError, Warehouse
from pipelines.warehouse.queries import NamedQueryError

OUTPUT = Path(__file__).resolve().parent / "output"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return samples.build_warehouse(tmp_path_factory.mktemp("report"))[1]


@pytest.fixture(scope="module")
def report(warehouse: Warehouse, tmp_path_factory: pytest.TempPathFactory):
    return write_report(warehouse, str(tmp_path_factory.mktemp("page") / "report.html"))


def test_the_page_is_one_file_that_needs_nothing_from_the_network(report) -> None:
    page = Path(report.path).read_text()
    assert report.size_bytes == Path(report.path).stat().st_size > 1_000_000  # plotly.js is inside
    assert re.search(r"<script[^>]*\bsrc=", page) is None
    assert re.search(r"<link[^>]*\bhref=", page) is None
    assert re.search(r"<(img|iframe)[^>]*\bsrc=", page) is None
    assert page.count('class="plotly-graph-div"') == page.count("Plotly.newPlot(") == report.charts
    assert report.charts == report.charts_with_data  # the sample warehouse has data for every chart
    expected = {
        "volume-source",
        "volume-channel_type",
        "volume-input_type",
        "volume-language",
        "volume-app",
        "turns-per-conversation",
        "conversation-duration",
        "component-latency",
        "perceived-latency",
        "turn-duration",
        "tool-calls",
        "tool-error-rate",
        "token-usage",
        "first-chunk",
        "agent-transfers",
        "trajectories",
        "tool-match",
        "llm-cost",
        "token-efficiency",
        "evaluation-pass-rate-support",
        "evaluation-latency-support",
        "evaluation-run-duration-support",
        "evaluation-scores-support",
        "evaluation-failures-support",
        "evaluation-pass-rate-sales",
        "evaluation-latency-sales",
        "evaluation-run-duration-sales",
    }
    traces = {chart for chart in report.chart_ids if chart.startswith("trace-")}  # test_waterfalls
    assert set(report.chart_ids) - traces == expected and traces
    # the latest regression, as a table: support's run-3 against run-2
    assert "support: run-2 (v2) → run-3 (v3)" in page
    assert re.search(r'status-regressed">regressed</td><td>evaluation</td><td[^>]*>refund</td>', page)


def test_plotly_js_is_inside_the_page_once_and_no_script_comes_from_a_server(report) -> None:
    page, plotly_js = Path(report.path).read_text(), get_plotlyjs()
    assert page.count(plotly_js) == 1
    assert re.search(r"<script[^>]*\bsrc=[\"']?(https?:)?//", page, re.IGNORECASE) is None
    assert page.count("cdn.plot.ly") == plotly_js.count("cdn.plot.ly")  # only plotly.js's own defaults


def test_chromium_renders_every_chart_without_a_console_message(report) -> None:
    binary = ensure_chromium()
    if binary is None:
        pytest.skip("Chromium is not installed and `apt-get install chromium` was not possible here")
    seen = visit(binary, Path(report.path).as_uri())
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "dashboard.png").write_bytes(seen.screenshot)
    assert seen.render_error is None
    assert seen.rendered == str(report.charts)
    assert seen.console == [] and seen.exceptions == [] and seen.log_entries == []
    assert [url for url in seen.requests if not url.startswith(("file:", "data:", "blob:"))] == []
    assert [chart["id"] for chart in seen.charts] == list(report.chart_ids)
    for chart in seen.charts:
        assert chart["svgs"] >= 1 and chart["traces"] >= 1, chart
        assert chart["title"], chart
        assert chart["width"] > 300 and chart["height"] > 300, chart
    day_charts = [c for c in seen.charts if c["id"].startswith(("volume-", "turns-", "tool-calls"))]
    assert all("Day (UTC)" in c["xtitles"] for c in day_charts)
    assert seen.screenshot.startswith(b"\x89PNG")


def test_an_empty_warehouse_still_gives_every_section(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "empty.duckdb"))
    with warehouse.connect() as conn:
        warehouse.ensure_schema(conn)
    report = write_report(warehouse, str(tmp_path / "out" / "report.html"))
    assert report.charts_with_data == 0 and report.charts > 10
    page = Path(report.path).read_text()
    assert "Nothing to compare: no app's newest completed evaluation run has an earlier completed run" in page
    assert "No conversations in this window" in page


def test_report_errors_are_clear(tmp_path: Path, warehouse: Warehouse) -> None:
    with pytest.raises(NoWarehouseError, match="no warehouse at"):
        write_report(Warehouse(str(tmp_path / "missing.duckdb")), str(tmp_path / "r.html"))
    with pytest.raises(NamedQueryError, match="expects a date"):
        write_report(warehouse, str(tmp_path / "r.html"), {"since": "yesterday"})
    with pytest.raises(
        NamedQueryError,
        match=r"until \(2026-11-01\), the first day excluded, must be after since \(2026-11-05\)",
    ):
        write_report(
            warehouse, str(tmp_path / "r.html"), {"since": date(2026, 11, 5), "until": date(2026, 11, 1)}
        )
    assert not (tmp_path / "r.html").exists()


def test_filters_narrow_the_report(warehouse: Warehouse, tmp_path: Path) -> None:
    report = write_report(warehouse, str(tmp_path / "r.html"), {"app": "sales", "since": date(2026, 11, 2)})
    assert "volume-app" not in report.chart_ids  # one app: no split by app
    assert "evaluation-pass-rate-support" not in report.chart_ids
    with pytest.raises(NamedQueryError, match="no app 'sails' in the warehouse; it holds: "):
        write_report(warehouse, str(tmp_path / "typo.html"), {"app": "sails"})
    assert not (tmp_path / "typo.html").exists()


def test_a_page_about_one_app_reads_its_rollup_parts_alone_and_draws_the_same_data(
    warehouse: Warehouse,
) -> None:
    with warehouse.connect(read_only=True) as conn:
        for app in ("sales", samples.SUPPORT):
            everyone, _ = read_report_data(conn, QUERIES, {"app": app})  # through every app's parts
            alone, _ = read_report_data(conn, QUERIES, {"app": app}, warehouse.scoped_parts_root)
            assert alone == everyone and any(alone.values()), app


def test_the_default_path_is_beside_the_warehouse() -> None:
    assert Settings.from_env({}).storage.report_path == "data/report.html"
    assert Settings.from_env({"CES_WAREHOUSE": "/srv/w.duckdb"}).storage.report_path == "/srv/report.html"
    assert Settings.from_env({"CES_REPORT": "/srv/www/ces.html"}).storage.report_path == "/srv/www/ces.html"


def test_the_asset_writes_the_report(warehouse: Warehouse, tmp_path: Path) -> None:
    storage = StorageSettings(warehouse=warehouse.path, report=str(tmp_path / "dashboard.html"))
    result = dg.materialize([dashboard], resources={"warehouse": WarehouseResource.from_settings(storage)})
    assert result.success
    metadata = result.asset_materializations_for_node("report__dashboard")[0].metadata
    assert metadata["path"].value == str(tmp_path / "dashboard.html")
    assert metadata["charts"].value == metadata["charts_with_data"].value > 10
    assert (tmp_path / "dashboard.html").stat().st_size == metadata["bytes"].value


def test_a_warehouse_load_asks_for_a_new_report_once() -> None:
    from pipelines.definitions import build_definitions

    definitions = build_definitions(Settings.from_env())
    assert definitions.resolve_job_def("report_dashboard") is not None
    assert report_after_loads_sensor.name in {sensor.name for sensor in definitions.sensors}
    assets = definitions.resolve_asset_graph()
    assert set(assets.get(REPORT_KEY).parent_keys) == {
        dg.AssetKey(["warehouse", "conversation_tables"]),
        dg.AssetKey(["warehouse", "evaluation_tables"]),
    }
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(APP_PARTITIONS.name, [samples.SUPPORT])
        selection = dg.AssetSelection.assets(REPORT_KEY)
        first = dg.evaluate_automation_conditions(definitions, instance, asset_selection=selection)
        assert first.total_requested == 0  # nothing loaded yet
        instance.report_runless_asset_event(
            dg.AssetMaterialization(asset_key=["warehouse", "evaluation_tables"], partition=samples.SUPPORT)
        )
        after_load = dg.evaluate_automation_conditions(
            definitions, instance, asset_selection=selection, cursor=first.cursor
        )
        assert after_load.total_requested == 1
        again = dg.evaluate_automation_conditions(
            definitions, instance, asset_selection=selection, cursor=after_load.cursor
        )
        assert again.total_requested == 0  # requested once, not on every tick


def test_a_directory_as_the_report_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="is a directory: give the report's file name"):
        write_report(Warehouse(str(tmp_path / "w.duckdb")), str(tmp_path))


def test_the_failure_panel_says_what_the_newest_run_failed_when_nothing_is_timed() -> None:
    """A run whose failures are all of scenarios has failures, no golden turn to time: the panel
    counts them rather than saying there are none."""
    from pipelines.report.evaluation_charts import EVALUATION_CHARTS

    app = "projects/p/locations/us/apps/sales"
    failures = next(spec for spec in EVALUATION_CHARTS if spec.query == "evaluation_failures").format(
        app="sales"
    )
    untimed = [{"app": app, "turn_latency_seconds": None}, {"app": app, "turn_latency_seconds": None}]
    (said,) = failures.chart(untimed).figure.layout.annotations
    (none,) = failures.chart([]).figure.layout.annotations
    assert said.text.startswith("2 failures in the newest completed run, none of a golden turn")
    assert none.text == "No failure in the newest completed run"


def test_the_report_and_the_trend_queries_show_the_30_days_up_to_the_newest_loaded_unless_told(
    tmp_path: Path,
) -> None:
    from test_anomalies import FIRST, _history

    from pipelines.ingest.load import load_conversation_partitions
    from pipelines.warehouse.queries import run_query

    lake, partitions = _history(tmp_path)  # 36 days
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, partitions)
    newest = max(day for _, day in partitions)
    first_shown = newest - timedelta(days=29)
    recent = Path(write_report(warehouse, str(tmp_path / "recent.html")).path).read_text()
    assert f"days: {first_shown} to the newest day with conversations" in recent
    assert str(first_shown) in recent and str(FIRST) not in recent  # no day before the window drawn
    everything = Path(write_report(warehouse, str(tmp_path / "all.html"), {"since": FIRST}).path).read_text()
    assert f"days: {FIRST} to the newest day with conversations" in everything
    assert str(FIRST + timedelta(days=1)) in everything
    until = {"since": FIRST, "until": newest}  # `until` is the first day left out
    window = Path(write_report(warehouse, str(tmp_path / "until.html"), until).path).read_text()
    assert f"days: {FIRST} to {newest - timedelta(days=1)} ·" in window

    def days(params: dict[str, object]) -> tuple[object, object]:
        columns, rows = run_query(warehouse, "daily_volume", params)
        found = [row[columns.index("day")] for row in rows]
        return min(found), max(found)

    assert days({}) == (first_shown, newest)
    assert days({"since": str(FIRST)}) == (FIRST, newest)
    until = newest - timedelta(days=3)  # excluded: the window is the 30 days before it
    assert days({"until": str(until)}) == (until - timedelta(days=30), until - timedelta(days=1))


def test_the_busiest_apps_are_drawn_and_the_page_says_how_many_are_left_out(
    warehouse: Warehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.report import data
    from pipelines.warehouse.queries import run_query

    columns, rows = run_query(warehouse, "conversation_volume", {"by": "app"})
    totals: dict[str, int] = {}
    for row in rows:
        app = row[columns.index("value")].rsplit("/", 1)[-1]
        totals[app] = totals.get(app, 0) + row[columns.index("conversations")]
    busiest, other = sorted(totals, key=lambda app: -totals[app])
    assert totals[busiest] > totals[other]
    monkeypatch.setattr(data, "MAX_APPS", 1)
    report = write_report(warehouse, str(tmp_path / "busiest.html"))
    page = Path(report.path).read_text()
    assert f"the 1 busiest of 2 ({busiest}; ces-pipeline report --app draws any other)" in page
    assert any(chart.endswith(f"-{busiest}") for chart in report.chart_ids)
    assert not any(chart.endswith(f"-{other}") for chart in report.chart_ids)
    assert f"/apps/{other}" not in page  # no line, waterfall or table row of the app left out
    # The charts whose rows sum every app say so; those of the busiest app do not.
    counted = "all 2 apps, not only those drawn"
    assert page.count(counted) == 5  # the volume by source, channel type, input type, language; tool match
    assert f"p50, p90, p99 per day · {counted}" not in page and "p50, p90, p99 per day" in page


def test_the_busiest_apps_queries_read_their_rollup_parts_alone_and_sums_every_apps(
    warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With apps left out, a query whose rows name their app (the tools' and the transfers' too)
    reads the busiest apps' rollup parts alone, one that sums every app (the window's volume by
    source) reads every app's: the data equals that read through every app's parts and then kept
    to the busiest."""
    from pipelines.report import data

    monkeypatch.setattr(data, "MAX_APPS", 1)
    params = {"since": date(1970, 1, 1)}
    with warehouse.connect(read_only=True) as conn:
        everyone, left_out = read_report_data(conn, QUERIES, params)  # through every app's parts
        scoped, scoped_left_out = read_report_data(conn, QUERIES, params, warehouse.scoped_parts_root)
    assert (scoped_left_out, left_out) == (1, 1)
    assert scoped == everyone
    for query in ("token_usage", "tool_error_trend", "agent_transfer_flows"):  # the busiest app's rows alone
        assert len({row["app"] for row in scoped[query]}) == 1, query
    every_app = sum(row["conversations"] for row in scoped["conversation_volume by source"])
    busiest = sum(row["conversations"] for row in scoped["conversation_volume by app"])
    assert every_app > busiest > 0  # the totals count the app left out too
