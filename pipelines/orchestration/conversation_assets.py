"""Conversation assets: raw API records → Parquet tables in the lake → DuckDB tables.

Each asset is a thin call into `pipelines.ingest`; all the logic is plain Python tested on
its own. Every materialization reports row counts (`dagster/row_count`) per table.
"""

from collections import Counter
from collections.abc import Iterator

import dagster as dg

from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partition
from pipelines.lake.checks import rows_outside_partition
from pipelines.orchestration.partitions import CES_API_POOL, DAILY_PARTITIONS, WAREHOUSE_POOL, partition_day
from pipelines.orchestration.resources import CesResource, LakeResource, WarehouseResource
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS

GROUP = "conversations"
RAW_PAGES = dg.AssetKey(["raw", "conversation_pages"])
CONVERSATION_OUTPUT_TABLES = (*CONVERSATION_TABLES, REJECTS)


def lake_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["lake", table])


def warehouse_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["warehouse", table])


@dg.asset(
    key=RAW_PAGES,
    partitions_def=DAILY_PARTITIONS,
    group_name=GROUP,
    pool=CES_API_POOL,
    kinds={"python"},
    description="Raw list_conversations pages and get_conversation responses, as received (gzip JSON Lines).",
)
def conversation_pages(
    context: dg.AssetExecutionContext, ces: CesResource, lake: LakeResource
) -> dg.MaterializeResult:
    day = partition_day(context)
    settings = ces.settings()
    if not settings.apps:
        raise dg.Failure("CES_APPS is not set: name at least one app (projects/{p}/locations/{l}/apps/{a}).")
    totals: Counter[str] = Counter()
    with ces.client() as client:
        for app in settings.apps:
            result = fetch_conversation_partition(
                client, lake.lake(), app, day, sources=settings.sources, page_size=settings.page_size
            )
            context.log.info(
                f"{app} {day}: {result.pages} pages, {result.listed} conversations listed, "
                f"{result.hydrated} fetched in full, {result.raw_bytes} bytes"
            )
            totals.update(pages=result.pages, listed=result.listed, hydrated=result.hydrated)
            totals.update(records=result.records, raw_bytes=result.raw_bytes)
        stats = client.stats
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": totals["records"],
            "apps": len(settings.apps),
            "pages": totals["pages"],
            "conversations_listed": totals["listed"],
            "conversations_hydrated": totals["hydrated"],
            "requests": stats.requests,
            "api_seconds": round(stats.api_seconds, 3),
            "bytes_received": stats.bytes_received,
            "raw_bytes": totals["raw_bytes"],
        }
    )


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            lake_key(spec.name),
            deps=[RAW_PAGES],
            group_name=GROUP,
            kinds={"parquet"},
            description=spec.description,
        )
        for spec in CONVERSATION_OUTPUT_TABLES
    ],
    check_specs=[
        dg.AssetCheckSpec(
            "rows_in_partition",
            asset=lake_key("conversations"),
            blocking=True,
            description="Every conversation in a day's Parquet started on that day (UTC).",
        )
    ],
    partitions_def=DAILY_PARTITIONS,
    name="lake_conversation_tables",
)
def lake_conversation_tables(
    context: dg.AssetExecutionContext, lake: LakeResource
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """Flatten the partition's raw records into one Parquet file per table and app.

    Covers every app with raw records for the day, so a rebuild needs no CES settings.
    """
    day = partition_day(context)
    rows: Counter[str] = Counter()
    rejects = 0
    for app in lake.lake().raw_apps(CONVERSATIONS_DATASET, day):
        result = flatten_conversation_partition(lake.lake(), app, day)
        rows.update(result.rows)
        rejects += result.rejects
        context.log.info(
            f"{app} {day}: {result.rows.get('conversations', 0)} conversations, {result.rejects} rejects"
        )
    rows["rejects"] = rejects
    for spec in CONVERSATION_OUTPUT_TABLES:
        yield dg.MaterializeResult(
            asset_key=lake_key(spec.name), metadata={"dagster/row_count": rows[spec.name]}
        )
    outside = {
        app: rows_outside_partition(lake.lake(), "conversations", "start_time", app, day)
        for app in lake.lake().raw_apps(CONVERSATIONS_DATASET, day)
    }
    yield dg.AssetCheckResult(
        check_name="rows_in_partition",
        asset_key=lake_key("conversations"),
        passed=not any(outside.values()),
        metadata={"rows_outside": sum(outside.values()), "apps": dg.MetadataValue.json(outside)},
    )


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            warehouse_key(spec.name),
            deps=[lake_key(spec.name)],
            group_name=GROUP,
            kinds={"duckdb"},
            description=spec.description,
        )
        for spec in CONVERSATION_OUTPUT_TABLES
    ],
    partitions_def=DAILY_PARTITIONS,
    pool=WAREHOUSE_POOL,
    name="warehouse_conversation_tables",
)
def warehouse_conversation_tables(
    context: dg.AssetExecutionContext, lake: LakeResource, warehouse: WarehouseResource
) -> Iterator[dg.MaterializeResult]:
    """Replace the partition in every warehouse table, in one transaction per app."""
    day = partition_day(context)
    rows: Counter[str] = Counter()
    for app in lake.lake().raw_apps(CONVERSATIONS_DATASET, day):
        rows.update(load_conversation_partition(lake.lake(), warehouse.warehouse(), app, day))
    context.log.info(f"{day}: loaded {dict(rows)}")
    for spec in CONVERSATION_OUTPUT_TABLES:
        yield dg.MaterializeResult(
            asset_key=warehouse_key(spec.name), metadata={"dagster/row_count": rows[spec.name]}
        )


CONVERSATION_ASSETS = [conversation_pages, lake_conversation_tables, warehouse_conversation_tables]

ingest_conversations_job = dg.define_asset_job(
    "ingest_conversations",
    selection=dg.AssetSelection.assets(*CONVERSATION_ASSETS),
    description="Fetch, flatten and load the conversations of one UTC day for every configured app.",
)

rebuild_conversations_job = dg.define_asset_job(
    "rebuild_conversations",
    selection=dg.AssetSelection.assets(lake_conversation_tables, warehouse_conversation_tables),
    description="Re-derive one UTC day's Parquet tables and warehouse rows from the raw lake, no API calls.",
)
