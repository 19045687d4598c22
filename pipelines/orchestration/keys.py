"""Asset keys: one per dataset layer, counting all its tables (a key a table: ~15 s of a 17 s rebuild)."""

from collections.abc import Mapping
from typing import Any

import dagster as dg

RAW_PAGES = dg.AssetKey(["raw", "conversation_pages"])
LAKE_CONVERSATIONS = dg.AssetKey(["lake", "conversation_tables"])
WAREHOUSE_CONVERSATIONS = dg.AssetKey(["warehouse", "conversation_tables"])
RAW_EVALUATION_RUNS = dg.AssetKey(["raw", "evaluation_runs"])
WAREHOUSE_EVALUATIONS = dg.AssetKey(["warehouse", "evaluation_tables"])


def rows_metadata(rows: Mapping[str, int], main: str) -> dict[str, Any]:
    """`dagster/row_count` of the dataset's main table, and `<table>_rows` for every table."""
    return {"dagster/row_count": rows[main], **{f"{table}_rows": count for table, count in rows.items()}}


def stats_metadata(stats: Any) -> dict[str, Any]:
    """The client's counters (`ClientStats`) as a step's metadata: what a slow or failing run
    spent on the API, its retries, and the tokens and sessions it had to renew."""
    return {
        "requests": stats.requests,
        "retries": stats.retries,
        "retry_seconds": round(stats.retry_seconds, 3),
        "api_seconds": round(stats.api_seconds, 3),
        "bytes_received": stats.bytes_received,
        "credential_refreshes": stats.credential_refreshes,
        "session_initializations": stats.session_initializations,
    }
