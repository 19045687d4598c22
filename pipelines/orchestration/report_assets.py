"""`report/dashboard`, rebuilt by the `report_after_loads` sensor once no load runs (one per backfill)."""

import dagster as dg

from pipelines.errors import ActionableError
from pipelines.orchestration.keys import WAREHOUSE_CONVERSATIONS, WAREHOUSE_EVALUATIONS
from pipelines.orchestration.resources import WarehouseResource

REPORT_KEY = dg.AssetKey(["report", "dashboard"])
WAREHOUSE_TABLE_KEYS = [WAREHOUSE_CONVERSATIONS, WAREHOUSE_EVALUATIONS]

AFTER_WAREHOUSE_LOADS = (
    dg.AutomationCondition.any_deps_updated().since(
        dg.AutomationCondition.newly_requested() | dg.AutomationCondition.newly_updated()
    )
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("a warehouse table was loaded since the last report, and no load is running")


@dg.asset(
    key=REPORT_KEY,
    deps=WAREHOUSE_TABLE_KEYS,
    group_name="report",
    kinds={"html"},
    automation_condition=AFTER_WAREHOUSE_LOADS,
    description="The dashboard: one self-contained HTML page of the trend views and the latest evaluation "
    "regression (CES_REPORT, default report.html beside the warehouse).",
)
def dashboard(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    # plotly (~15 MB) is imported by the run that draws, not by every process loading the definitions
    from pipelines.report import write_report

    try:
        report = write_report(warehouse.warehouse(), warehouse.report_path)
    except ActionableError as exc:
        raise dg.Failure(str(exc)) from exc
    context.log.info(f"wrote {report.path}: {report.charts} charts, {report.size_bytes} bytes")
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(report.path),
            "charts": report.charts,
            "charts_with_data": report.charts_with_data,
            "bytes": report.size_bytes,
        }
    )


report_dashboard_job = dg.define_asset_job(
    "report_dashboard",
    selection=dg.AssetSelection.assets(dashboard),
    description="Regenerate the dashboard (report/dashboard) from the warehouse.",
)

report_after_loads_sensor = dg.AutomationConditionSensorDefinition(
    "report_after_loads",
    target=dg.AssetSelection.assets(dashboard),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Regenerates report/dashboard once warehouse tables were loaded and no load is running.",
)

DEFINITIONS = dg.Definitions(
    assets=[dashboard], jobs=[report_dashboard_job], sensors=[report_after_loads_sensor]
)
