"""Conversation assets (raw → Parquet → DuckDB): a step a partition or range, one client, one transaction."""

import warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from datetime import date
from typing import Any

import dagster as dg

from pipelines.ces.tools import Listing
from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import flatten_conversation_partition
from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.checks import rows_outside_partition
from pipelines.orchestration.checks import conversation_check_results, conversation_check_specs
from pipelines.orchestration.keys import (
    LAKE_CONVERSATIONS,
    RAW_PAGES,
    WAREHOUSE_CONVERSATIONS,
    rows_metadata,
    stats_metadata,
)
from pipelines.orchestration.partitions import CES_API_POOL, partition_key, partitions_of
from pipelines.orchestration.resources import CesResource, LakeResource, WarehouseResource
from pipelines.transform.schemas import REJECTS

GROUP = "conversations"


def _days(partitions: Sequence[tuple[str, date]]) -> dict[str, object]:
    """The metadata naming what a run covered: how many partitions, from which day to which."""
    return {
        "partitions": len(partitions),
        "first_day": str(min(day for _, day in partitions)),
        "last_day": str(max(day for _, day in partitions)),
    }


def _each_partition(
    context: dg.AssetExecutionContext, figures: Mapping[tuple[str, date], Mapping[str, int]]
) -> dict[str, int]:
    """Each partition's own figures on its materialization, and their sums, the run's. A range
    run's `MaterializeResult` metadata goes to every partition it covers: alone, the run's totals
    would read as each partition's row count."""
    totals: Counter[str] = Counter()
    for (app, day), values in figures.items():
        context.add_asset_metadata(dict(values), partition_key=partition_key(app, day))
        totals.update(values)
    return dict(totals)


_FETCH_METADATA = {
    "dagster/row_count": "records",
    "pages": "pages",
    "conversations_listed": "listed",
    "conversations_listed_outside_window": "outside",
    "conversations_listed_without_traces": "without_traces",
    "conversations_hydrated": "hydrated",
    "raw_bytes": "raw_bytes",
}
"""A fetch step's metadata: this attribute of each partition's `FetchResult`, and their sums."""


def conversation_assets(
    partitions_def: dg.MultiPartitionsDefinition, *, days_per_run: int, freshness_hours: float
) -> list[dg.AssetsDefinition]:
    """The conversation assets, a run covering up to `days_per_run` days (a backfill groups an app's)."""
    with warnings.catch_warnings():  # backfill policies are marked beta: that is known here
        warnings.simplefilter("ignore", dg.BetaWarning)
        policy = dg.BackfillPolicy.multi_run(max_partitions_per_run=days_per_run)
        # every conversation asset: the same partitions, backfill policy and group
        shared: dict[str, Any] = {
            "partitions_def": partitions_def,
            "backfill_policy": policy,
            "group_name": GROUP,
        }

        @dg.asset(
            key=RAW_PAGES,
            **shared,
            pool=CES_API_POOL,
            kinds={"python"},
            description="Raw list_conversations pages and get_conversation responses, as received "
            "(gzip JSON Lines).",
        )
        def conversation_pages(
            context: dg.AssetExecutionContext, ces: CesResource, lake: LakeResource
        ) -> dg.MaterializeResult:
            partitions = partitions_of(context)
            settings = ces.settings()
            fetched = {}
            with ces.client() as client:
                for app, day in partitions:
                    result = fetch_conversation_partition(
                        client, lake.lake(), app, day, Listing.from_settings(settings)
                    )
                    fetched[(app, day)] = {
                        name: getattr(result, attribute) for name, attribute in _FETCH_METADATA.items()
                    }
                    context.log.info(
                        f"{app} {day}: {result.pages} pages, {result.listed} conversations listed "
                        f"({result.without_traces} without traces), {result.hydrated} fetched in full, "
                        f"{result.raw_bytes} bytes"
                    )
                stats = client.stats
            totals = _each_partition(context, fetched)
            untraced = totals["conversations_listed_without_traces"]
            if untraced and settings.hydrate == "never":
                context.log.warning(
                    f"{untraced} listed conversations came without their spans and "
                    "CES_HYDRATE=never: their spans and latency rows stay empty"
                )
            outside = totals["conversations_listed_outside_window"]
            if outside:
                context.log.warning(
                    f"the server listed {outside} conversations outside the days asked for: it "
                    "ignores the list_conversations filter, so every day pages through more history than "
                    "it holds (they are not loaded twice; the quota is spent on them)"
                )
            return dg.MaterializeResult(metadata={**totals, **_days(partitions), **stats_metadata(stats)})

        @dg.asset(
            key=LAKE_CONVERSATIONS,
            deps=[RAW_PAGES],
            check_specs=[
                dg.AssetCheckSpec(
                    "rows_in_partition",
                    asset=LAKE_CONVERSATIONS,
                    blocking=True,
                    description="Every conversation in a day's Parquet started on that day (UTC).",
                )
            ],
            **shared,
            kinds={"parquet"},
            description="One Parquet file per conversation table and partition, and the rejects.",
        )
        def lake_conversation_tables(
            context: dg.AssetExecutionContext, lake: LakeResource
        ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
            partitions = partitions_of(context)
            flattened = {}
            outside = 0
            for app, day in partitions:
                result = flatten_conversation_partition(lake.lake(), app, day)
                rows = {**result.rows, REJECTS.name: result.rejects}
                flattened[(app, day)] = rows_metadata(rows, "conversations")
                outside += rows_outside_partition(lake.lake(), "conversations", "start_time", app, day)
            totals = _each_partition(context, flattened)
            context.log.info(
                f"flattened {len(partitions)} partitions: {totals['conversations_rows']} conversations, "
                f"{totals['rejects_rows']} rejects"
            )
            yield dg.MaterializeResult(metadata={**totals, **_days(partitions)})
            yield dg.AssetCheckResult(
                check_name="rows_in_partition",
                asset_key=LAKE_CONVERSATIONS,
                passed=outside == 0,
                metadata={"rows_outside": outside},
            )

        @dg.asset(
            key=WAREHOUSE_CONVERSATIONS,
            deps=[LAKE_CONVERSATIONS],
            check_specs=conversation_check_specs(freshness_hours),
            **shared,
            kinds={"duckdb"},
            description="The conversation tables of the warehouse (conversations, turns, messages, chunks, "
            "tool calls and responses, agent transfers, spans) and their rejects.",
        )
        def warehouse_conversation_tables(
            context: dg.AssetExecutionContext, lake: LakeResource, warehouse: WarehouseResource
        ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
            """Replace the step's partitions in one transaction, then check what was loaded."""
            partitions = partitions_of(context)
            inserted = load_conversation_partitions(lake.lake(), warehouse.warehouse(), partitions)
            each = {partition: rows_metadata(rows, "conversations") for partition, rows in inserted.items()}
            totals = _each_partition(context, each)
            context.log.info(
                f"loaded {len(partitions)} partitions: {totals['conversations_rows']} conversations, "
                f"{totals['rejects_rows']} rejects"
            )
            yield dg.MaterializeResult(metadata={**totals, **_days(partitions)})
            apps = sorted({app for app, _ in partitions})
            days = [day for _, day in partitions]
            loaded = warehouse.warehouse()
            with loaded.connect(read_only=True) as conn:
                yield from conversation_check_results(
                    conn,
                    apps,
                    min(days),
                    max(days),
                    freshness_hours=freshness_hours,
                    parts_root=loaded.scoped_parts_root,
                )

        return [conversation_pages, lake_conversation_tables, warehouse_conversation_tables]


def conversation_jobs(assets: Sequence[dg.AssetsDefinition]) -> list[Any]:
    pages, lake_tables, warehouse_tables = assets
    return [
        dg.define_asset_job(
            "ingest_conversations",
            selection=dg.AssetSelection.assets(pages, lake_tables, warehouse_tables),
            description="Fetch, flatten and load the conversations of one app and a range of UTC days.",
        ),
        dg.define_asset_job(
            "rebuild_conversations",
            selection=dg.AssetSelection.assets(lake_tables, warehouse_tables),
            description="Re-derive Parquet tables and warehouse rows from the raw lake, no API calls.",
        ),
    ]
