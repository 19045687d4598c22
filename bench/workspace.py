"""What every benchmark command shares: a work folder with the corpus's raw lake linked in, an
instance of its own, the command's arguments over the corpus's days, and the rows it left."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

TABLES = (
    "conversations",
    "turns",
    "messages",
    "chunks",
    "tool_calls",
    "tool_responses",
    "agent_transfers",
    "spans",
)
SQL_DIR = Path(__file__).resolve().parent / "sql"


def link_raw(lake_root: str, work: Path, apps: Iterable[str] | None = None) -> str:
    """A fresh lake under `work` whose raw records are the corpus's (links, nothing copied): its
    whole raw folder as a symlink, or only the conversation files of `apps`, each hard-linked
    (the lake's listing does not descend into symlinked folders below its root), so that one
    lake can gather apps from several roots (bench.scale's replicas beside the corpus)."""
    lake = work / "lake"
    lake.mkdir(parents=True, exist_ok=True)
    raw = lake / "raw"
    if apps is None:
        if not raw.exists():
            raw.symlink_to(Path(lake_root).resolve() / "raw", target_is_directory=True)
        return str(lake)
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.paths import app_segment
    from pipelines.lake.store import RAW_FILE

    for app in apps:
        folder = Path("raw", CONVERSATIONS_DATASET, f"app={app_segment(app)}")
        for source in (Path(lake_root) / folder).glob(f"date=*/{RAW_FILE}"):
            link = lake / folder / source.parent.name / RAW_FILE
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                try:
                    os.link(source, link)
                except OSError:  # another filesystem
                    shutil.copyfile(source, link)
    return str(lake)


def warehouse_counts(path: str) -> dict[str, int]:
    from pipelines.warehouse.duck import Warehouse

    counts = Warehouse(path).row_counts()
    return {table: counts[table] for table in TABLES}


# -- the project's paths: the default commands, as a user runs them ---------------------------


def partitions_of(lake_root: str, limit: int | None = None) -> list[tuple[str, str]]:
    from pipelines.ingest.flatten import CONVERSATIONS_DATASET
    from pipelines.lake.store import Lake

    found = [(app, day.isoformat()) for app, day in Lake(lake_root).raw_partitions(CONVERSATIONS_DATASET)]
    # Interleave apps, so that a prefix of the list spreads over apps like the whole does.
    found.sort(key=lambda item: (item[1], item[0]))
    return found[:limit] if limit else found


def instance_env(work: Path, lake_root: str, partitions: list[tuple[str, str]], **env: str) -> dict[str, str]:
    """The environment of a `ces-pipeline` command or a Dagster daemon over these partitions:
    an instance of its own under `work` with the project's instance settings (dagster.yaml),
    the lake, a warehouse under `work`, and the partitions' apps."""
    (work / "dagster_home").mkdir(parents=True, exist_ok=True)
    shutil.copy(
        Path(__file__).resolve().parent.parent / "dagster_home" / "dagster.yaml", work / "dagster_home"
    )
    return {
        "DAGSTER_HOME": str(work / "dagster_home"),
        "CES_LAKE": lake_root,
        "CES_WAREHOUSE": str(work / "warehouse.duckdb"),
        "CES_APPS": ",".join(sorted({app for app, _ in partitions})),
        **env,
    }


def command_args(name: str, partitions: list[tuple[str, str]], extra: tuple[str, ...] = ()) -> list[str]:
    """`NAME --since … --until … --skip-evaluations EXTRA…`: the arguments the bench gives a
    load command over the partitions' days, in this process or as a command (bench.scale)."""
    days = sorted({date.fromisoformat(day) for _, day in partitions})
    since, until = str(days[0]), str(days[-1] + timedelta(days=1))
    return [name, "--since", since, "--until", until, "--skip-evaluations", *extra]


def partition_rows(warehouse_path: str) -> dict[str, dict[str, int]]:
    """Rows per table of each (app, day) the warehouse holds."""
    from pipelines.warehouse.duck import Warehouse

    found: dict[str, dict[str, int]] = {}
    with Warehouse(warehouse_path).connect(read_only=True) as conn:
        for table in TABLES:
            rows = conn.execute(
                f"SELECT c.app, t.partition_date, count(*) FROM {table} AS t "
                "JOIN conversations AS c USING (conversation_name) GROUP BY ALL"
            ).fetchall()
            for app, day, count in rows:
                found.setdefault(f"{app}|{day}", dict.fromkeys(TABLES, 0))[table] = count
    return found


def warehouse_rows(work: Path) -> dict[str, Any]:
    warehouse = str(work / "warehouse.duckdb")
    return {"rows": warehouse_counts(warehouse), "partition_rows": partition_rows(warehouse)}


# -- DuckDB's own JSON reader -------------------------------------------------------------------
