"""`make bench`: every approach on the same corpus, side by side, each in its own process.

    python -m bench.run [--conversations 20000] [--days 60] [--shape real|simulator|both] [--rounds N]
                        [--skip-dlt] [--skip-phases] [--skip-backfill] …
    python -m bench.run --corpus conversations.jsonl.gz …   (conversations from elsewhere)
    python -m bench.run --scale [--sizes 20000,200000,2000000]   (bench.scale: as the warehouse grows)

1. writes (or reuses, while the code that writes it is unchanged) the corpus: raw-lake JSON
   Lines of simulator conversations, as the simulator makes them or reshaped as real traces
   (`--shape`; `both` runs the whole bench on each), or of the conversations of a JSON Lines
   file (bench.corpus);
2. runs, one process each: the project's rebuild path and DuckDB's read_json flattening, in
   turn for `--rounds` rounds (the machine's speed drifts; each round's ratio compares runs
   seconds apart, and the round with the median ratio is reported), then the project's ingest
   path against the simulator (served by a separate process, rate limit lifted) between two
   rebuilds of the same partitions (its CPU is set against their mean), `ces-pipeline ingest`
   of one partition at the documented rate limit (10 requests/s), a dlt pipeline (whenever dlt
   is installed; on the first 20,000 conversations at most, unless `--dlt-conversations` says
   otherwise), the rebuild and the ingest once more with their CPU sampled by phase
   (bench.profiling), and a Dagster backfill of every partition run by `dagster-daemon`;
3. measures each from outside (bench.measure): wall time, CPU time, peak RSS of the largest
   process and of the whole process tree;
4. checks that all produced the same row counts per table, sets the figures against the
   targets, and writes them to bench/results/bench-<N>-<shape>.json and .md.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import START, CorpusSpec, ensure_corpus, ensure_external_corpus
from bench.measure import measure, settle_shared_libraries
from bench.profiling import PHASES
from bench.report import checks, markdown, ratios
from bench.shapes import SHAPES
from bench.simulator import Simulator
from pipelines.config import DEFAULT_MAX_RPS

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_ROUNDS = 3
"""Rebuild and DuckDB rounds on a corpus of at most `LARGE_CORPUS` conversations (one above)."""
LARGE_CORPUS = 50_000
DLT_CONVERSATIONS = 20_000
"""dlt runs on at most this many conversations unless told otherwise: at ~140 conversations/s,
200,000 would take it 25 minutes (its throughput is what the ratio compares)."""


def approach(name: str, lake: str, work: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "bench.approaches", name, "--lake", lake, "--work", str(work), *extra]


def _rates(result: dict[str, Any], conversations: int) -> dict[str, Any]:
    seconds = result["seconds"]
    spans = result["rows"]["spans"]
    return {
        "conversations": conversations,
        "conversations_per_second": conversations / seconds,
        "spans_per_second": spans / seconds,
        "cpu_ms_per_conversation": 1000 * result["cpu_seconds"] / conversations,
    }


def _dlt_missing() -> str | None:
    """Why dlt cannot run here, or None."""
    if importlib.util.find_spec("dlt") is None:
        return "dlt is not installed (pip install -e '.[bench]', or make bench)"
    return None


def run(args: argparse.Namespace, shape: str) -> dict[str, Any]:
    spec = dataclasses.replace(
        CorpusSpec.for_count(args.conversations, days=args.days, shape=shape), seed=args.seed
    )
    if args.corpus:
        lake, corpus = ensure_external_corpus(Path(args.corpus))
        conversations = corpus["stats"]["conversations"]
        print(f"corpus: {conversations} conversations from {args.corpus}", flush=True)
    else:
        print(
            f"corpus: {spec.conversations} conversations ({spec.apps} apps x {spec.days} days, "
            f"{spec.shape} shape)",
            flush=True,
        )
        lake, corpus = ensure_corpus(spec)
        conversations = spec.conversations
    settle_shared_libraries(sys.prefix)
    scratch = Path(tempfile.mkdtemp(prefix="ces-bench-"))
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    workers = ["--workers", str(args.workers)]
    rounds = args.rounds or (DEFAULT_ROUNDS if conversations <= LARGE_CORPUS else 1)
    try:
        results.update(_median_round(_rounds(lake, scratch, workers, rounds, conversations)))
        if args.corpus:  # the simulator serves its own conversations only
            skipped["ingest"] = "an external corpus: the simulator serves only its own conversations"
        else:
            results.update(_paired_ingest(args, spec, lake, scratch, workers))
        results["ratelimited"] = _rate_limited(args, spec, lake, scratch)  # the simulator's own data

        why_not_dlt = "--skip-dlt" if args.skip_dlt else _dlt_missing()
        if why_not_dlt:
            skipped["dlt"] = why_not_dlt
        else:
            limit = min(args.dlt_conversations or conversations, conversations)
            print(f"dlt ({limit} conversations) ...", flush=True)
            extra = ["--limit", str(limit)] if limit < conversations else []
            results["dlt"] = measure(approach("dlt", lake, scratch / "dlt", *extra))
            results["dlt"].update(_rates(results["dlt"], results["dlt"]["rows"]["conversations"]))

        if args.skip_phases:
            skipped["phases"] = "--skip-phases"
        else:
            results["phases"] = _phases(None if args.corpus else spec, results, lake, scratch, workers)

        if args.skip_backfill:
            skipped["backfill"] = "--skip-backfill"
        else:
            print("Dagster backfill of every partition, run by dagster-daemon ...", flush=True)
            timeout = ["--timeout", str(args.backfill_timeout)]
            results["backfill"] = measure(approach("backfill", lake, scratch / "backfill", *timeout))
            results["backfill"].update(_rates(results["backfill"], conversations))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "conversations": conversations,
        "shape": "external" if args.corpus else shape,
        "corpus": corpus,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "system": platform.platform(),
        },
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "results": results,
        "skipped": skipped,
        "checks": checks(results),
        "ratios": ratios(results),
    }


def _paired_ingest(
    args: argparse.Namespace, spec: CorpusSpec, lake: str, scratch: Path, workers: list[str]
) -> dict[str, Any]:
    """The ingest over HTTP of the corpus's first partitions (the simulator serving them), between
    two rebuilds of the same partitions: its CPU is set against theirs."""
    paired: dict[str, Any] = {}
    ingest_partitions = max(1, min(args.ingest_conversations, spec.conversations) // spec.per_day)
    same_partitions = [*workers, "--partitions", str(ingest_partitions)]
    print(f"rebuild of the ingest's {ingest_partitions} partitions, before it ...", flush=True)
    paired["rebuild_before_ingest"] = _rebuild_cpu(
        measure(approach("rebuild", lake, scratch / "before", *same_partitions))
    )
    print(f"ingest over HTTP ({ingest_partitions} partitions) ...", flush=True)
    with Simulator(spec.conversations, seed=spec.seed, days=spec.days, shape=spec.shape) as simulator:
        paired["ingest"] = measure(
            approach("ingest", lake, scratch / "ingest", *same_partitions, "--url", simulator.url)
        )
    paired["ingest"].update(_rates(paired["ingest"], paired["ingest"]["rows"]["conversations"]))
    print(f"rebuild of the ingest's {ingest_partitions} partitions, after it ...", flush=True)
    paired["rebuild_after_ingest"] = _rebuild_cpu(
        measure(approach("rebuild", lake, scratch / "after", *same_partitions))
    )
    return paired


def _rate_limited(args: argparse.Namespace, spec: CorpusSpec, lake: str, scratch: Path) -> dict[str, Any]:
    """`ces-pipeline ingest` of one partition of `--rate-conversations` at `--rate-limit`
    requests/s (the project's documented quota by default), the simulator serving the corpus's
    shape."""
    per_partition = args.rate_conversations
    print(
        f"ces-pipeline ingest at {args.rate_limit:g} requests/s ({per_partition} conversations) ...",
        flush=True,
    )
    with Simulator(2 * per_partition, per_partition, spec.seed, shape=spec.shape) as simulator:
        result = measure(
            approach(
                "ratelimited",
                lake,
                scratch / "ratelimited",
                *("--url", simulator.url, "--max-rps", f"{args.rate_limit:g}"),
                *("--app", simulator.apps[0], "--day", START.isoformat()),
            )
        )
    result["cpu_share"] = {
        "requests": result["requests_cpu_seconds"] / result["requests_seconds"],
        "command": result["command_cpu_seconds"] / result["seconds"],
        "process": result["cpu_seconds"] / result["process_wall_seconds"],
    }
    return result


def _phases(
    spec: CorpusSpec | None, results: dict[str, Any], lake: str, scratch: Path, workers: list[str]
) -> dict[str, Any]:
    """The rebuild and the ingest run once more with their CPU sampled by phase
    (bench.profiling): each phase's share of the sampled CPU, and that share of the CPU the
    unprofiled run's command used, per conversation."""
    found: dict[str, Any] = {}
    for name in ("rebuild", "ingest"):
        if name not in results:
            continue
        print(f"{name} once more, its CPU sampled by phase ...", flush=True)
        path = scratch / f"{name}-phases.json"
        command = approach(name, lake, scratch / f"{name}-phases", *workers, "--profile", str(path))
        if name == "rebuild":
            sampled = measure(command)
        else:
            assert spec is not None
            command += ["--partitions", str(results[name]["partitions"])]
            with Simulator(spec.conversations, seed=spec.seed, days=spec.days, shape=spec.shape) as simulator:
                sampled = measure([*command, "--url", simulator.url])
        profile = json.loads(path.read_text())
        total = sum(profile["phases"].values())
        unprofiled = results[name]
        per_conversation = 1000 * unprofiled["command_cpu_seconds"] / unprofiled["rows"]["conversations"]
        shares = {phase: profile["phases"].get(phase, 0.0) / total for phase in PHASES}
        found[name] = {
            "sampled_command_cpu_seconds": sampled["command_cpu_seconds"],
            "unprofiled_command_cpu_seconds": unprofiled["command_cpu_seconds"],
            "command_cpu_ms_per_conversation": per_conversation,
            "native_seconds": profile["native_seconds"],
            "sampler_seconds": profile["sampler_seconds"],
            "samples": profile["samples"],
            "shares": shares,
            "ms_per_conversation": {phase: share * per_conversation for phase, share in shares.items()},
            "functions": profile["functions"],
        }
    return found


def _rounds(
    lake: str, scratch: Path, workers: list[str], rounds: int, conversations: int
) -> list[dict[str, Any]]:
    """Rebuild and DuckDB in turn, `rounds` times: each round's two runs are seconds apart."""
    paired = []
    for index in range(rounds):
        pair = {}
        for name, extra in (("rebuild", workers), ("duckdb", [])):
            label = "rebuild (flatten -> Parquet -> warehouse)" if name == "rebuild" else "duckdb read_json"
            print(f"{label}, round {index + 1} of {rounds} ...", flush=True)
            work = scratch / f"{name}-{index}"
            pair[name] = measure(approach(name, lake, work, *extra))
            pair[name].update(_rates(pair[name], conversations))
            shutil.rmtree(work, ignore_errors=True)
        paired.append(pair)
    return paired


def _rebuild_cpu(result: dict[str, Any]) -> dict[str, Any]:
    """What the ingest's CPU is set against: a rebuild of the same partitions, run just before
    or just after it (the machine's speed drifts between the rounds and the ingest)."""
    conversations = result["rows"]["conversations"]
    return {
        "conversations": conversations,
        "cpu_seconds": result["cpu_seconds"],
        "cpu_ms_per_conversation": 1000 * result["cpu_seconds"] / conversations,
    }


def _round_ratio(pair: dict[str, Any]) -> float:
    return pair["rebuild"]["conversations_per_second"] / pair["duckdb"]["conversations_per_second"]


def _median_round(paired: list[dict[str, Any]]) -> dict[str, Any]:
    """The rebuild and DuckDB results of the round whose ratio is the median (the lower middle
    of an even count), and every round's throughputs and ratio."""
    ranked = sorted(paired, key=_round_ratio)
    median = ranked[(len(ranked) - 1) // 2]
    rounds = [
        {
            "rebuild_conversations_per_second": pair["rebuild"]["conversations_per_second"],
            "duckdb_conversations_per_second": pair["duckdb"]["conversations_per_second"],
            "ratio": _round_ratio(pair),
        }
        for pair in paired
    ]
    return {"rebuild": median["rebuild"], "duckdb": median["duckdb"], "rounds": rounds}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--scale" in argv:  # `make bench BENCH_ARGS="--scale …"`: the scale mode takes the rest
        from bench.scale import main as scale

        return scale([arg for arg in argv if arg != "--scale"])
    parser = argparse.ArgumentParser(description="ces-pipeline against DuckDB read_json and dlt")
    parser.add_argument(
        "--scale",
        action="store_true",
        help="the scale mode instead: the product's commands as the warehouse grows to 20k, 200k and "
        "2M conversations; the other arguments are its own (python -m bench.scale --help)",
    )
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=CorpusSpec.seed, help="the generated corpus's data seed")
    parser.add_argument("--days", type=int, default=60, help="days of history of each of the two apps")
    parser.add_argument(
        "--shape",
        choices=[*SHAPES, "both"],
        default="real",
        help="the simulator's conversations, or reshaped as real traces; both: the whole bench on each",
    )
    parser.add_argument(
        "--corpus",
        help="JSON Lines of CES conversations (gzip or not) to run on instead of a generated corpus; "
        "the ingest over HTTP is then not run (the simulator serves only its own conversations)",
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument(
        "--rounds",
        type=int,
        help=f"rebuild and DuckDB runs in turn (default {DEFAULT_ROUNDS}; 1 above {LARGE_CORPUS:,})",
    )
    parser.add_argument(
        "--ingest-conversations", type=int, default=20_000, help="ingest at most this many over HTTP"
    )
    parser.add_argument("--skip-dlt", action="store_true", help="dlt runs whenever it is installed")
    parser.add_argument(
        "--dlt-conversations",
        type=int,
        default=DLT_CONVERSATIONS,
        help=f"run dlt on the first N conversations only (default {DLT_CONVERSATIONS:,})",
    )
    parser.add_argument(
        "--rate-limit",
        type=float,
        default=DEFAULT_MAX_RPS,
        help=f"requests/s of the rate-limited ingest (default: CES_MAX_RPS's, {DEFAULT_MAX_RPS:g})",
    )
    parser.add_argument(
        "--rate-conversations",
        type=int,
        default=1000,
        help="conversations of the rate-limited ingest's one partition (1,000: ~150 requests)",
    )
    parser.add_argument("--skip-phases", action="store_true", help="no CPU-per-phase runs")
    parser.add_argument("--skip-backfill", action="store_true", help="no Dagster backfill")
    parser.add_argument("--backfill-timeout", type=float, default=3600.0)
    args = parser.parse_args(argv)
    if args.corpus and args.shape == "both":
        parser.error("--shape both generates the corpora; --corpus brings its own")
    for shape in SHAPES if args.shape == "both" else [args.shape]:
        report = run(args, shape)
        RESULTS.mkdir(parents=True, exist_ok=True)
        if args.corpus:
            stem = RESULTS / f"bench-{Path(args.corpus).name.split('.')[0]}"
        elif args.seed != CorpusSpec.seed:
            stem = RESULTS / f"bench-{report['conversations']}-{shape}-seed{args.seed}"
        else:
            stem = RESULTS / f"bench-{report['conversations']}-{shape}"
        stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
        text = markdown(report)
        stem.with_suffix(".md").write_text(text)
        print(text, flush=True)


if __name__ == "__main__":
    main()
