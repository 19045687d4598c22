"""Scale mode: the product's own commands on a warehouse grown through its own load path.

    python -m bench.scale [--sizes 20000,200000,2000000] [--shape real] [--warehouse file] [--work DIR]
    make bench BENCH_ARGS="--scale --sizes 20000,200000"

A warehouse that only ever held the bench corpus says nothing about the tenth or hundredth
month of a deployment, so for each size, smallest first:

1. the bench corpus (`bench.corpus`, 20,000 conversations over 60 days of two apps, generated
   once and cached as for `bench.run`) is replicated under new app names until the raw lake
   holds the size: replica k of app `…/apps/a` is `…/apps/a-rk`, the app segment of its path
   and every occurrence of the app's resource name in its records rewritten (conversation
   names start with it, so they are distinct too), line by line; the replicas are cached in
   the work folder, so a larger size (or the next invocation) writes only the new ones;
2. `ces-pipeline rebuild` of the whole history into an empty warehouse, then in it:
   `ces-pipeline rebuild` of one app-day (a daily schedule's load; once more under strace where
   it is installed, to tell the warehouse's own disk writes from the lake's and Dagster's), the
   hourly schedule's run of one app (`ces-pipeline ingest` of its last day and the lookback days
   before, from the simulator serving the corpus), every named query with `ces-pipeline query`,
   every named query again for that one app (`--param app=…`: the same work at every size, where
   the default answer covers every app), `ces-pipeline report`, and every named query through
   `ces-pipeline mcp`'s `run_query` (its answers checked against the CLI's);
3. each command is a subprocess of the installed `ces-pipeline` with default settings, timed
   and measured from outside (`bench.measure`: wall time, peak RSS, bytes written);
4. the figures are set against the smallest size of the same invocation and the targets, and
   written to bench/results/scale-<shape>.json and .md.

`--reuse` measures again, with the code installed now, the warehouses an earlier run left:
each size's run folder (`WORK/run-<conversations>[-<warehouse>]`) is kept, and a size whose folder holds a
finished whole rebuild skips it (its figures are that rebuild's, dated) and first loads its
app-day once, unmeasured but reported, as the first load after an upgrade does (views made
again, a new rollup computed). A 2M warehouse takes 90 minutes to rebuild; this takes ten.

`--warehouse` picks the storage measured: `file` (the default `CES_WAREHOUSE`, a DuckDB file
with its conversation tables as Parquet parts), `ducklake-sqlite` (a DuckLake whose catalog
is a local SQLite file, data files beside it) or `ducklake-postgres` (the scale-out setting: its
catalog a database of a PostgreSQL server the run starts, durable as in production, and gone
with it, so not `--reuse`), written to scale-<shape>-<warehouse>.*.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from isal import igzip

from bench.corpus import DATA_DIR, CorpusSpec, ensure_corpus
from bench.measure import clones_on_copy, measure, settle_shared_libraries, written_by_place
from bench.run import RESULTS
from bench.scale_report import BASE, ROUNDS, checks, markdown
from bench.shapes import SHAPES
from bench.simulator import Simulator
from bench.workspace import command_args, instance_env, link_raw, partitions_of
from pipelines.ingest.flatten import CONVERSATIONS_DATASET
from pipelines.lake.paths import app_segment
from pipelines.lake.store import RAW_GZIP_LEVEL, TABLE_FILE, Lake
from scale.servers import create_database, postgres_server, psql

DEFAULT_SIZES = (20_000, 200_000, 2_000_000)
LOOKBACK_DAYS = 2
"""`CES_LOOKBACK_DAYS`'s default: the days before today an hourly run fetches again."""
WAREHOUSES = ("file", "ducklake-sqlite", "ducklake-postgres")
"""The storages `--warehouse` measures (see the module's docstring)."""
CES_PIPELINE = str(Path(sys.executable).with_name("ces-pipeline"))
"""The installed command, as a user runs it."""


# -- growing the raw lake -----------------------------------------------------------------------


def _replica_app(app: str, replica: int) -> str:
    return app if replica == 0 else f"{app}-r{replica}"


def _replicate(source: str, target: str, renames: dict[str, str]) -> None:
    """`source`'s records with every app resource name renamed, into `target`: one line at a
    time (a page of 100 conversations, ~2 MB), so memory stays bounded whatever the file's size,
    and through a hidden temporary file, so an interrupted growth leaves no partial partition."""
    names = "|".join(re.escape(app) for app in sorted(renames, key=len, reverse=True))
    pattern = re.compile(f'(?:{names})(?=["/])'.encode())  # a whole name, not a prefix of another
    encoded = {app.encode(): renamed.encode() for app, renamed in renames.items()}
    folder, name = target.rsplit("/", 1)
    os.makedirs(folder, exist_ok=True)
    temporary = f"{folder}/.{name}.tmp"
    with (
        igzip.open(source, "rb") as reader,
        igzip.open(temporary, "wb", compresslevel=RAW_GZIP_LEVEL) as writer,
    ):
        for line in reader:
            writer.write(pattern.sub(lambda match: encoded[match.group()], line))
    os.replace(temporary, target)


def grow(corpus_lake: str, replicas_root: str, replicas: int, workers: int) -> int:
    """Write the raw files of replicas 1…`replicas`-1 of the corpus that `replicas_root` does not
    hold yet (in `workers` processes); returns how many were written."""
    corpus, pool = Lake(corpus_lake), Lake(replicas_root)
    apps = sorted({app for app, _ in corpus.raw_partitions(CONVERSATIONS_DATASET)})
    jobs = []
    for replica in range(1, replicas):
        renames = {app: _replica_app(app, replica) for app in apps}
        for app, day in corpus.raw_partitions(CONVERSATIONS_DATASET):
            target = pool.raw_path(CONVERSATIONS_DATASET, renames[app], day)
            if not os.path.exists(target):
                jobs.append((corpus.raw_path(CONVERSATIONS_DATASET, app, day), target, renames))
    with ProcessPoolExecutor(max_workers=workers) as executor:
        for future in [executor.submit(_replicate, *job) for job in jobs]:
            future.result()
    return len(jobs)


# -- measuring the commands ---------------------------------------------------------------------


def _run(env: dict[str, str], *args: str) -> dict[str, Any]:
    """`ces-pipeline ARGS…` measured from outside: wall seconds, peak RSS MB, disk written MB."""
    found = measure([CES_PIPELINE, *args], env=env, json_result=False)
    return {
        "seconds": found["process_wall_seconds"],
        "peak_rss_mb": found["peak_rss_mb"],
        "disk_written_mb": found["disk_written_mb"],
        "stdout": found["stdout"],
    }


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each figure over the runs, and the runs' seconds."""
    keys = ("seconds", "peak_rss_mb", "disk_written_mb")
    return {
        **{key: statistics.median(run[key] for run in runs) for key in keys},
        "rounds": [r["seconds"] for r in runs],
    }


def _hourly(env: dict[str, str], spec: CorpusSpec, app: str, last_day: date) -> dict[str, Any]:
    """The hourly schedule's run of one app, as `ces-pipeline ingest` makes it: the app's last day
    and the `LOOKBACK_DAYS` before it, fetched over HTTP from the simulator serving the corpus
    (its rate limit lifted, so the figure is the pipeline's cost, not the quota's wait), into the
    whole warehouse."""
    since, until = last_day - timedelta(days=LOOKBACK_DAYS), last_day + timedelta(days=1)
    with Simulator(spec.conversations, seed=spec.seed, days=spec.days, shape=spec.shape) as simulator:
        served = {**env, "CES_MCP_URL": simulator.url, "CES_MAX_RPS": "1000"}
        args = ("ingest", "--since", str(since), "--until", str(until), "--skip-evaluations", "--app", app)
        found = _median([_run(served, *args) for _ in range(ROUNDS)])
    return {**found, "app": app, "since": str(since), "until": str(until)}


def _partition_bytes(lake_root: str, app: str, day: str) -> int:
    """Bytes of one app-day's Parquet table files in the lake: the data a load of it carries."""
    pattern = f"tables/*/app={app_segment(app)}/date={day}/{TABLE_FILE}"
    return sum(path.stat().st_size for path in Path(lake_root).glob(pattern))


def _queries() -> list[str]:
    from pipelines.warehouse.queries import named_queries

    return [query.name for query in named_queries()]


def _query_rows(env: dict[str, str], *params: str) -> dict[str, dict[str, Any]]:
    """Every named query from the command line (with `--param` each of `params`), `ROUNDS` times:
    median seconds and the rows."""
    given = [arg for param in params for arg in ("--param", param)]
    found = {}
    for name in _queries():
        runs = [_run(env, "query", name, *given, "--format", "json") for _ in range(ROUNDS)]
        rows = json.loads(runs[-1]["stdout"])
        found[name] = {**_median(runs), "rows": rows}
    return found


def _counted(queries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each query's figures with its number of rows instead of the rows."""
    return {
        name: {k: v for k, v in q.items() if k != "rows"} | {"rows": len(q["rows"])}
        for name, q in queries.items()
    }


def warehouse_conversations(env: dict[str, str]) -> int:
    """The conversations the warehouse holds: `daily_volume` over the whole history (by default it
    answers the 30 days up to the newest loaded)."""
    found = _run(env, "query", "daily_volume", "--param", "since=1970-01-01", "--format", "json")
    return sum(row["conversations"] or 0 for row in json.loads(found["stdout"]))


def _mcp(env: dict[str, str], cli: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every named query through `ces-pipeline mcp` over stdio, as an agent's client starts and
    asks it, `ROUNDS` times each: median seconds of the tool call, and whether its rows are the
    CLI's (their first ones, where the server's row or byte cap cut the answer)."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=CES_PIPELINE, args=["mcp"], env={**os.environ, **env})

    async def ask() -> dict[str, dict[str, Any]]:
        seconds: dict[str, list[float]] = {name: [] for name in cli}
        answers: dict[str, Any] = {}
        async with Client(server) as client:
            for _ in range(ROUNDS):
                for name in cli:
                    started = time.perf_counter()
                    answer = await client.call_tool("run_query", {"name": name})
                    seconds[name].append(time.perf_counter() - started)
                    answers[name] = answer
        found = {}
        for name, answer in answers.items():
            content = answer.structured_content or {}
            rows, expected = content.get("rows", []), cli[name]["rows"]
            truncated = bool(content.get("truncated"))
            same = not answer.is_error and rows == (expected[: len(rows)] if truncated else expected)
            found[name] = {
                "seconds": statistics.median(seconds[name]),
                "rounds": seconds[name],
                "rows": len(rows),
                "truncated": truncated,
                "error": answer.content[0].text if answer.is_error else None,
                "same_as_cli": same,
            }
        return found

    return anyio.run(ask)


def _warehouse_env(run: Path, warehouse: str, catalog: str | None) -> dict[str, str]:
    """The settings that put the warehouse of `warehouse` (one of WAREHOUSES) in `run`; `catalog`:
    the libpq connection string of a PostgreSQL catalog's database."""
    if warehouse == "file":
        return {"CES_WAREHOUSE": str(run / "warehouse.duckdb")}
    target = f"postgres:{catalog}" if warehouse == "ducklake-postgres" else f"sqlite:{run / 'catalog.sqlite'}"
    return {"CES_WAREHOUSE": f"ducklake:{target}", "CES_WAREHOUSE_DATA_PATH": f"{run / 'warehouse-data'}/"}


def _warehouse_mb(run: Path, warehouse: str, catalog: str | None) -> float:
    """What the warehouse takes on disk: the DuckDB file (its Parquet parts apart), or the
    DuckLake's catalog and data files."""
    if warehouse == "file":
        return (run / "warehouse.duckdb").stat().st_size / 2**20
    files = [*(run / "warehouse-data").rglob("*"), *([run / "catalog.sqlite"] if catalog is None else [])]
    held = sum(path.stat().st_size for path in files if path.is_file())
    return (
        held + (int(psql(catalog, "SELECT pg_database_size(current_database())")) if catalog else 0)
    ) / 2**20


@contextmanager
def _catalog_server(warehouse: str) -> Iterator[str | None]:
    """The PostgreSQL server a `ducklake-postgres` run keeps its catalogs on (None: no server)."""
    if warehouse != "ducklake-postgres":
        yield None
        return
    with postgres_server(durable=True) as server:
        yield server


def measure_size(
    corpus_lake: str,
    work: Path,
    replicas: int,
    day_partition: tuple[str, str],
    conversations: int,
    spec: CorpusSpec,
    warehouse: str = "file",
    reuse: bool = False,
    postgres: str | None = None,
) -> dict[str, Any]:
    """The commands on a warehouse of `replicas` copies of the corpus `spec`, in its run folder:
    rebuilt from empty, or (`reuse`) the one an earlier run left there when it holds one;
    `postgres`: the server of a `ducklake-postgres` warehouse's catalog."""
    run = work / f"run-{conversations}{'' if warehouse == 'file' else f'-{warehouse}'}"
    finished = run / "rebuild.json"  # written once the whole rebuild succeeded: what it measured
    corpus_apps = sorted({app for app, _ in partitions_of(corpus_lake)})
    replica_apps = [_replica_app(app, k) for k in range(1, replicas) for app in corpus_apps]
    lake = str(run / "lake")
    app, day = day_partition
    reused = reuse and finished.is_file()
    if not reused:
        shutil.rmtree(run, ignore_errors=True)
        link_raw(corpus_lake, run, corpus_apps)
        link_raw(str(work / "replicas"), run, replica_apps)
    partitions = partitions_of(lake)
    catalog = create_database(postgres, f"lake_{conversations}") if postgres else None
    env = instance_env(run, lake, partitions, **_warehouse_env(run, warehouse, catalog))
    first_load = None
    if reused:
        rebuild = json.loads(finished.read_text())
        print(f"  the warehouse rebuilt {rebuild['finished_at']}, loaded once with this code ...", flush=True)
        first_load = _run(env, *command_args("rebuild", [day_partition], ("--app", app)))
        first_load.pop("stdout")
    else:
        print(f"  ces-pipeline rebuild of {len(partitions)} partitions ...", flush=True)
        rebuild = _run(env, *command_args("rebuild", partitions))
        rebuild["conversations_per_second"] = conversations / rebuild["seconds"]
        rebuild["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
        finished.write_text(json.dumps({k: v for k, v in rebuild.items() if k != "stdout"}) + "\n")
    print(f"  ces-pipeline rebuild of {day} of {app}, {ROUNDS} times ...", flush=True)
    one_day = _median(
        [_run(env, *command_args("rebuild", [day_partition], ("--app", app))) for _ in range(ROUNDS)]
    )
    one_day.update(app=app, day=day, partition_bytes=_partition_bytes(lake, app, day))
    places = {"warehouse": run / "warehouse", "lake": Path(lake), "dagster": run / "dagster_home"}
    if warehouse != "file":
        places["warehouse"] = run / "catalog.sqlite"  # a PostgreSQL catalog: its log, below
        places["warehouse data"] = run / "warehouse-data"
    one_day_command = [CES_PIPELINE, *command_args("rebuild", [day_partition], ("--app", app))]
    logged = psql(catalog, "SELECT pg_current_wal_lsn()") if catalog else None
    one_day["written_by"] = written_by_place(one_day_command, env, places, clones=clones_on_copy(run))
    if catalog and one_day["written_by"] is not None:  # what PostgreSQL wrote for it: its log
        wal = psql(catalog, f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{logged}')")
        one_day["written_by"]["warehouse"] = float(wal) / 2**20
    print(f"  the hourly schedule's run: ingest of {app}'s last {LOOKBACK_DAYS + 1} days ...", flush=True)
    last_day = max(date.fromisoformat(day) for _, day in partitions)
    hourly = _hourly(env, spec, app, last_day)
    print(f"  ces-pipeline query of each named query, {ROUNDS} times ...", flush=True)
    queries = _query_rows(env)
    print(f"  ces-pipeline query of each named query for {app} alone, {ROUNDS} times ...", flush=True)
    # What a dashboard filtered to one app costs: the same work at every size, where the default
    # answer covers every app (100 times more of them at 2M than at 20k).
    app_queries = _query_rows(env, f"app={app}")
    # What every command pays before it reads anything (its imports): `query --list` opens nothing.
    startup = _median([_run(env, "query", "--list") for _ in range(ROUNDS)])
    print("  ces-pipeline report ...", flush=True)
    report = _run(env, "report")
    print(f"  run_query of ces-pipeline mcp, each named query {ROUNDS} times ...", flush=True)
    mcp = _mcp(env, queries)
    loaded = warehouse_conversations(env)
    for found in (rebuild, report, startup, *queries.values()):
        found.pop("stdout", None)
    result = {
        "replicas": replicas,
        "apps": len(corpus_apps) * replicas,
        "partitions": len(partitions),
        "conversations": conversations,
        "warehouse_conversations": loaded,
        "warehouse_mb": _warehouse_mb(run, warehouse, catalog),
        "rebuild": rebuild,
        "reused": reused,
        "first_load": first_load,
        "one_day": one_day,
        "hourly": hourly,
        "queries": _counted(queries),
        "app_queries": _counted(app_queries),
        "report": report,
        "mcp": mcp,
        "startup": startup,
    }
    return result  # the run folder stays, for a look or for `--reuse`


# -- the whole run ------------------------------------------------------------------------------


def run(
    sizes: list[int],
    shape: str,
    work: Path | None,
    workers: int,
    warehouse: str = "file",
    reuse: bool = False,
) -> dict[str, Any]:
    """Grow the lake and measure at each size, smallest first, writing the results after each
    (a large size takes an hour); a size whose command fails is recorded, and ends the run."""
    spec = CorpusSpec.for_count(BASE, days=60, shape=shape)
    corpus_lake, corpus = ensure_corpus(spec, workers=workers)
    settle_shared_libraries(sys.prefix)
    # its real path: the warehouse's views name their parts by it, and a link to it may go away
    work = (work or DATA_DIR / f"scale-{Path(corpus_lake).parent.name}").resolve()
    partitions = partitions_of(corpus_lake)
    day_partition = partitions[len(partitions) // 2]  # the same app-day at every size
    report: dict[str, Any] = {
        "shape": shape,
        "warehouse": warehouse,
        "corpus": corpus,
        "work": str(work),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "sizes": [],
    }
    with _catalog_server(warehouse) as postgres:
        for size in sorted(sizes):
            replicas = max(1, round(size / BASE))
            conversations = replicas * corpus["stats"]["conversations"]
            print(f"{conversations:,} conversations ({replicas} replicas of the corpus) ...", flush=True)
            started = time.perf_counter()
            written = grow(corpus_lake, str(work / "replicas"), replicas, workers)
            growth = time.perf_counter() - started
            try:
                measured = measure_size(
                    corpus_lake,
                    work,
                    replicas,
                    day_partition,
                    conversations,
                    spec,
                    warehouse,
                    reuse,
                    postgres,
                )
            except RuntimeError as exc:
                seconds = time.perf_counter() - started
                report["failed"] = {"conversations": conversations, "error": str(exc), "seconds": seconds}
                write(report)
                break
            measured.update(
                size=size, replica_files=written, growth_seconds=growth, seconds=time.perf_counter() - started
            )
            measured["checks"] = checks(measured, report["sizes"][0] if report["sizes"] else measured)
            report["sizes"].append(measured)
            write(report)
    return report


def write(report: dict[str, Any]) -> None:
    """bench/results/scale-<shape>.json and .md."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    suffix = "" if report["warehouse"] == "file" else f"-{report['warehouse']}"
    stem = RESULTS / f"scale-{report['shape']}{suffix}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    stem.with_suffix(".md").write_text(markdown(report))


def _sizes(text: str) -> list[int]:
    sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < BASE // 2:
        raise argparse.ArgumentTypeError(f"sizes are conversations, at least {BASE:,} each: {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=list(DEFAULT_SIZES),
        help="conversations, comma-separated (default 20000,200000,2000000): multiples of the 20,000 corpus",
    )
    parser.add_argument("--shape", choices=SHAPES, default="real", help="the corpus's shape (bench.shapes)")
    parser.add_argument(
        "--work", type=Path, help="where the replicas and the warehouse go (default under bench/data)"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="processes writing replicas")
    parser.add_argument(
        "--warehouse", choices=WAREHOUSES, default="file", help="the storage measured (default: the default)"
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the warehouses earlier runs left in WORK again instead of rebuilding them",
    )
    args = parser.parse_args(argv)
    if args.reuse and args.warehouse == "ducklake-postgres":
        parser.error("--reuse: a ducklake-postgres catalog goes with the server the run starts")
    report = run(args.sizes, args.shape, args.work, args.workers, args.warehouse, args.reuse)
    print(markdown(report), flush=True)
    if "failed" in report:
        raise SystemExit(f"{report['failed']['conversations']:,} conversations: {report['failed']['error']}")


if __name__ == "__main__":
    main()
