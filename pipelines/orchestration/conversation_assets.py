"""Conversation assets: raw API records → Parquet tables in the lake → DuckDB tables.

Each asset is a thin call into `pipelines.ingest`; all the logic is plain Python tested on
its own. Every materialization reports row counts (`dagster/row_count`) per table.
"""

import time
from collections.abc import Iterator

import dagster as dg

from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partition
from pipelines.lake.checks import rows_outside_partition
from pipelines.orchestration.checks import CONVERSATION_CHECK_SPECS, conversation_check_results
from pipelines.orchestration.keys import lake_key, table_asset_specs, warehouse_key
from pipelines.orchestration.partitions import (
    APP_DAY_PARTITIONS,
    CES_API_POOL,
    WAREHOUSE_POOL,
    partition_app_day,
)
from pipelines.orchestration.resources import CesResource, LakeResource, WarehouseResource
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS

GROUP = "conversations"
RAW_PAGES = dg.AssetKey(["raw", "conversation_pages"])
CONVERSATION_OUTPUT_TABLES = (*CONVERSATION_TABLES, REJECTS)


@dg.asset(
    key=RAW_PAGES,
    partitions_def=APP_DAY_PARTITIONS,
    group_name=GROUP,
    pool=CES_API_POOL,
    kinds={"python"},
    description="Raw list_conversations pages and get_conversation responses, as received (gzip JSON Lines).",
)
def conversation_pages(
    context: dg.AssetExecutionContext, ces: CesResource, lake: LakeResource
) -> dg.MaterializeResult:
    app, day = partition_app_day(context)
    settings = ces.settings()
    started = time.monotonic()
    with ces.client() as client:
        result = fetch_conversation_partition(
            client, lake.lake(), app, day, sources=settings.sources, page_size=settings.page_size
        )
        stats = client.stats
    context.log.info(
        f"{app} {day}: {result.pages} pages, {result.listed} conversations listed, "
        f"{result.hydrated} fetched in full, {stats.requests} requests, {result.raw_bytes} bytes"
    )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": result.records,
            "pages": result.pages,
            "conversations_listed": result.listed,
            "conversations_hydrated": result.hydrated,
            "requests": stats.requests,
            "retries": stats.retries,
            "api_seconds": round(stats.api_seconds, 3),
            "api_mean_latency_ms": round(1000 * stats.api_seconds / stats.requests, 1)
            if stats.requests
            else 0.0,
            "bytes_received": stats.bytes_received,
            "raw_bytes": result.raw_bytes,
            "elapsed_seconds": round(time.monotonic() - started, 3),
        }
    )


@dg.multi_asset(
    specs=table_asset_specs(
        CONVERSATION_OUTPUT_TABLES, lake_key, deps_of=lambda _: [RAW_PAGES], group=GROUP, kind="parquet"
    ),
    check_specs=[
        dg.AssetCheckSpec(
            "rows_in_partition",
            asset=lake_key("conversations"),
            blocking=True,
            description="Every conversation in a day's Parquet started on that day (UTC).",
        )
    ],
    partitions_def=APP_DAY_PARTITIONS,
    name="lake_conversation_tables",
)
def lake_conversation_tables(
    context: dg.AssetExecutionContext, lake: LakeResource
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Flatten the partition's raw records into one Parquet file per table."""
    app, day = partition_app_day(context)
    started = time.monotonic()
    result = flatten_conversation_partition(lake.lake(), app, day)
    elapsed = round(time.monotonic() - started, 3)
    context.log.info(
        f"{app} {day}: {result.rows.get('conversations', 0)} conversations, {result.rejects} rejects"
    )
    rows = {**result.rows, REJECTS.name: result.rejects}
    for spec in CONVERSATION_OUTPUT_TABLES:
        yield dg.MaterializeResult(
            asset_key=lake_key(spec.name),
            metadata={"dagster/row_count": rows[spec.name], "elapsed_seconds": elapsed},
        )
    outside = rows_outside_partition(lake.lake(), "conversations", "start_time", app, day)
    yield dg.AssetCheckResult(
        check_name="rows_in_partition",
        asset_key=lake_key("conversations"),
        passed=outside == 0,
        metadata={"rows_outside": outside},
    )


@dg.multi_asset(
    specs=table_asset_specs(
        CONVERSATION_OUTPUT_TABLES, warehouse_key, deps_of=lambda t: [lake_key(t)], group=GROUP, kind="duckdb"
    ),
    check_specs=CONVERSATION_CHECK_SPECS,
    partitions_def=APP_DAY_PARTITIONS,
    pool=WAREHOUSE_POOL,
    name="warehouse_conversation_tables",
)
def warehouse_conversation_tables(
    context: dg.AssetExecutionContext, lake: LakeResource, warehouse: WarehouseResource
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Replace the partition in every warehouse table in one transaction, then check it."""
    app, day = partition_app_day(context)
    started = time.monotonic()
    rows = load_conversation_partition(lake.lake(), warehouse.warehouse(), app, day)
    elapsed = round(time.monotonic() - started, 3)
    context.log.info(f"{app} {day}: loaded {rows}")
    for spec in CONVERSATION_OUTPUT_TABLES:
        yield dg.MaterializeResult(
            asset_key=warehouse_key(spec.name),
            metadata={"dagster/row_count": rows[spec.name], "elapsed_seconds": elapsed},
        )
    with warehouse.warehouse().connect(read_only=True) as conn:
        yield from conversation_check_results(conn, app, day)


CONVERSATION_ASSETS = [conversation_pages, lake_conversation_tables, warehouse_conversation_tables]

ingest_conversations_job = dg.define_asset_job(
    "ingest_conversations",
    selection=dg.AssetSelection.assets(*CONVERSATION_ASSETS),
    description="Fetch, flatten and load the conversations of one app and UTC day.",
)

rebuild_conversations_job = dg.define_asset_job(
    "rebuild_conversations",
    selection=dg.AssetSelection.assets(lake_conversation_tables, warehouse_conversation_tables),
    description="Re-derive one app-day's Parquet tables and warehouse rows from the raw lake, no API calls.",
)
