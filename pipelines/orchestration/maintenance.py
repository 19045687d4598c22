"""The warehouse's daily maintenance: a DuckLake's snapshots expired, its small files merged and
the files nothing reads any more deleted, which DuckLake never does by itself. A DuckDB-file
warehouse needs none: each load deletes the parts it replaced once no reader holds them."""

import dataclasses

import dagster as dg

from pipelines.orchestration.resources import WarehouseResource


@dg.op(description="Expire a DuckLake warehouse's old snapshots, merge its small files, delete unread ones.")
def warehouse_maintenance_op(context: dg.OpExecutionContext, warehouse: WarehouseResource) -> dg.Output[None]:
    states = warehouse.warehouse().maintain()
    if states is None:
        context.log.info("a DuckDB-file warehouse: its loads delete what they replaced, nothing to do")
        return dg.Output(None)
    before, after = states
    summary = (
        f"snapshots {before.snapshots} → {after.snapshots}, data files {before.data_files} → "
        f"{after.data_files}, delete files {before.delete_files} → {after.delete_files}"
    )
    context.log.info(summary)
    return dg.Output(
        None,
        metadata={
            **{f"{name} before": value for name, value in dataclasses.asdict(before).items()},
            **{f"{name} after": value for name, value in dataclasses.asdict(after).items()},
            "summary": summary,
        },
    )


@dg.job(description="A DuckLake warehouse's maintenance (nothing for a DuckDB file).")
def warehouse_maintenance_job() -> None:
    warehouse_maintenance_op()


warehouse_maintenance_daily = dg.ScheduleDefinition(
    name="warehouse_maintenance_daily",
    job=warehouse_maintenance_job,
    cron_schedule="30 3 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Daily at 03:30 UTC: a DuckLake warehouse's maintenance.",
)

DEFINITIONS = dg.Definitions(jobs=[warehouse_maintenance_job], schedules=[warehouse_maintenance_daily])
