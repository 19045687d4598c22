"""What publishing a load costs as the warehouse grows: `python -m bench.publish --lake L --work W`.

A load writes a copy of the warehouse file and renames it over the one readers open, so that a
BI tool never blocks a load nor sees part of one. This times the default command on one
partition, `ces-pipeline rebuild` of one app-day (a daily schedule's load), in a warehouse of the
corpus's conversations and then of ten times as many (the corpus's rows again under other names
and earlier dates), beside the copy alone: the file copied and fsynced, as a load does.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from datetime import date
from pathlib import Path

import duckdb

from bench.approaches import SQL_DIR, TABLES, _command, _link_raw, _partitions

ROUNDS = 3


def _copy_seconds(path: Path) -> float:
    """One copy of the file beside it, fsynced, as `pipelines.warehouse.publish` makes it."""
    copy = path.with_name(path.name + ".benchcopy")
    started = time.perf_counter()
    shutil.copyfile(path, copy)
    with open(copy, "rb+") as handle:
        os.fsync(handle.fileno())
    elapsed = time.perf_counter() - started
    copy.unlink()
    return elapsed


def _grow(path: Path, times: int) -> None:
    """`times` copies of every conversation table's rows, renamed and moved back by 61 days each."""
    grow = (SQL_DIR / "grow_table.sql").read_text()
    with duckdb.connect(str(path)) as conn:
        for table in TABLES:
            conn.execute(f"CREATE TEMP TABLE original AS SELECT * FROM {table}")
            for k in range(1, times):
                conn.execute(grow.format(table=table, copy=k, days=61 * k))
            conn.execute("DROP TABLE original")
        conn.execute("CHECKPOINT")


def _measure(work: Path, lake_root: str, partition: tuple[str, str]) -> dict[str, float]:
    warehouse = work / "warehouse.duckdb"
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        conversations = conn.execute("SELECT count(*) FROM conversations").fetchone()[0]
    app = ("--app", partition[0])
    loads = [_command("rebuild", [partition], work, lake_root, extra=app)["seconds"] for _ in range(ROUNDS)]
    copies = [_copy_seconds(warehouse) for _ in range(ROUNDS)]
    return {
        "conversations": conversations,
        "file_mb": round(warehouse.stat().st_size / 1e6, 1),
        "load_seconds": round(statistics.median(loads), 3),
        "copy_seconds": round(statistics.median(copies), 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", required=True, help="a bench corpus's lake root (raw records)")
    parser.add_argument("--work", required=True, help="an empty folder")
    parser.add_argument("--grow", type=int, default=10, help="the second warehouse: so many times the first")
    parser.add_argument("--out", default="bench/results/publish.md")
    args = parser.parse_args(argv)
    work = Path(args.work)
    lake_root = _link_raw(args.lake, work)
    partitions = _partitions(lake_root)
    _command("rebuild", partitions, work, lake_root)
    app, day = partitions[len(partitions) // 2]
    rows = [_measure(work, lake_root, (app, day))]
    _grow(work / "warehouse.duckdb", args.grow)
    rows.append(_measure(work, lake_root, (app, day)))
    lines = [
        f"# Publishing a load ({date.today()})",
        "",
        f"`ces-pipeline rebuild` of one app-day ({day}), median of {ROUNDS}, beside a copy of the "
        "warehouse file with its fsync (what publishing adds to a load).",
        "",
        "| warehouse conversations | file MB | one-partition load s | file copy + fsync s | copy share |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        share = row["copy_seconds"] / row["load_seconds"]
        lines.append(
            f"| {row['conversations']:,} | {row['file_mb']:,} | {row['load_seconds']} | "
            f"{row['copy_seconds']} | {share:.0%} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
