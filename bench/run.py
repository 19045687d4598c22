"""`make bench`: every approach on the same corpus, side by side, each in its own process.

    python -m bench.run [--conversations 20000] [--seed S] [--rounds N] [--skip-dlt] [--dlt-conversations N]
    python -m bench.run --corpus conversations.jsonl.gz …   (conversations from elsewhere)

1. writes (or reuses) the corpus: raw-lake JSON Lines of simulator conversations, or of the
   conversations of a JSON Lines file (bench.corpus);
2. runs, one process each: the project's rebuild path and DuckDB's read_json flattening, in
   turn for `--rounds` rounds (the machine's speed drifts; each round's ratio compares runs
   seconds apart, and the round with the median ratio is reported), then the project's ingest
   path against the simulator (served by a separate process, rate limit lifted) between two
   rebuilds of the same partitions (its CPU is set against their mean), a dlt pipeline (on the
   first 20,000 conversations at most, unless `--dlt-conversations` says otherwise), and a
   rate-limited fetch;
3. measures each from outside: wall time, CPU time (user + system of the process and its
   workers, from wait4's rusage), peak RSS of the largest process (rusage), and of the whole
   process tree the peak sum of RSS (every 20 ms) and of PSS (every 0.5 s), from /proc;
4. checks that all produced the same row counts per table, and writes the figures and the
   ratios to bench/results/bench-<N>.json and .md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import START, CorpusSpec, ensure_corpus, ensure_external_corpus
from bench.shapes import SHAPES

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_ROUNDS = 3
"""Rebuild and DuckDB rounds on a corpus of at most `LARGE_CORPUS` conversations (one above)."""
LARGE_CORPUS = 50_000
DLT_CONVERSATIONS = 20_000
"""dlt runs on at most this many conversations unless told otherwise: at ~140 conversations/s,
200,000 would take it 25 minutes (its throughput is what the ratio compares)."""


def _tree(root: int) -> set[int]:
    """`root` and all its descendants, from /proc: through each thread's `children` file where
    the kernel has them (a few reads, not one per process on the machine: the sampler shares
    the two cores with what it measures), else from every process's parent."""
    try:
        return _descendants(root)
    except FileNotFoundError:
        if not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"):
            return _tree_by_parents(root)
        return {root}  # it has just exited


def _descendants(pid: int) -> set[int]:
    members = {pid}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                children = [int(child) for child in handle.read().split()]
        except FileNotFoundError:
            continue  # that thread ended
        for child in children:
            try:
                members |= _descendants(child)
            except FileNotFoundError:
                continue  # that child ended
    return members


def _tree_by_parents(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    members = {root}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in members and pid not in members:
                members.add(pid)
                changed = True
    return members


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm", "rb") as handle:
        return int(handle.read().split()[1]) * PAGE_SIZE


def _pss(pid: int) -> int:
    """Proportional set size: each shared page split between the processes mapping it, so the
    modules a worker shares with the process it was forked from count once for the tree."""
    with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
        for line in handle:
            if line.startswith(b"Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def _sum(pids: set[int], reader) -> int:
    total = 0
    for pid in pids:
        try:
            total += reader(pid)
        except (OSError, IndexError, ValueError):
            continue
    return total


def measure(command: list[str], *, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `command`, sampling its process tree's memory; its last stdout line is its JSON result."""
    out = tempfile.TemporaryFile()  # noqa: SIM115 (read after the process ends)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=out, env={**os.environ, **(env or {})})
    peak_rss = peak_pss = 0
    samples = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        members = _tree(process.pid)
        peak_rss = max(peak_rss, _sum(members, _rss))
        if samples % 25 == 0:  # PSS costs the kernel ~5 ms per large process: every 0.5 s
            peak_pss = max(peak_pss, _sum(members, _pss))
        samples += 1
        time.sleep(0.02)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    out.seek(0)
    lines = out.read().decode().strip().splitlines()
    if process.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(command[2:4])} failed with exit code {process.returncode}")
    result = json.loads(lines[-1])
    result.update(
        process_wall_seconds=wall,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_rss_mb=usage.ru_maxrss / 1024,
        peak_tree_mb=peak_pss / 2**20,
        peak_tree_rss_mb=peak_rss / 2**20,
    )
    return result


class Simulator:
    """The simulator in its own process (its CPU is not the pipeline's), serving a corpus scale."""

    def __init__(
        self,
        conversations: int,
        per_partition: int | None = None,
        seed: int = CorpusSpec.seed,
        *,
        days: int | None = None,
        shape: str = "simulator",
    ):
        command = [sys.executable, "-m", "bench.simulator", "--conversations", str(conversations)]
        command += ["--seed", str(seed), "--shape", shape]
        if per_partition:
            command += ["--per-partition", str(per_partition)]
        if days:
            command += ["--days", str(days)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        self.apps = [self.process.stdout.readline().strip() for _ in range(2)]

    def __enter__(self) -> Simulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


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


def run(args: argparse.Namespace) -> dict[str, Any]:
    spec = dataclasses.replace(
        CorpusSpec.for_count(args.conversations, days=args.days, shape=args.shape), seed=args.seed
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
    scratch = Path(tempfile.mkdtemp(prefix="ces-bench-"))
    results: dict[str, Any] = {}
    workers = ["--workers", str(args.workers)]
    rounds = args.rounds or (DEFAULT_ROUNDS if conversations <= LARGE_CORPUS else 1)
    try:
        results.update(_median_round(_rounds(lake, scratch, workers, rounds, conversations)))
        if not args.corpus:  # the simulator serves its own conversations only
            results.update(_paired_ingest(args, spec, lake, scratch, workers))

        print(f"rate-limited fetch ({args.rate_limit} requests/s) ...", flush=True)
        with Simulator(args.rate_conversations, per_partition=args.rate_conversations) as small:
            results["ratelimited"] = measure(
                approach(
                    "ratelimited",
                    lake,
                    scratch / "ratelimited",
                    "--url",
                    small.url,
                    "--max-rps",
                    str(args.rate_limit),
                    "--app",
                    small.apps[0],
                    "--day",
                    START.isoformat(),
                )
            )

        if not args.skip_dlt:
            limit = min(args.dlt_conversations or conversations, conversations)
            print(f"dlt ({limit} conversations) ...", flush=True)
            extra = ["--limit", str(limit)] if limit < conversations else []
            results["dlt"] = measure(approach("dlt", lake, scratch / "dlt", *extra))
            results["dlt"].update(_rates(results["dlt"], results["dlt"]["rows"]["conversations"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "conversations": conversations,
        "corpus": corpus,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "system": platform.platform(),
        },
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "results": results,
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
            approach(
                "ingest",
                lake,
                scratch / "ingest",
                *workers,
                "--url",
                simulator.url,
                "--partitions",
                str(ingest_partitions),
            )
        )
    paired["ingest"].update(_rates(paired["ingest"], paired["ingest"]["rows"]["conversations"]))
    print(f"rebuild of the ingest's {ingest_partitions} partitions, after it ...", flush=True)
    paired["rebuild_after_ingest"] = _rebuild_cpu(
        measure(approach("rebuild", lake, scratch / "after", *same_partitions))
    )
    return paired


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


def checks(results: dict[str, Any]) -> dict[str, Any]:
    """Row counts: every full-corpus approach equal to rebuild; ingest equal partition by partition."""
    reference = results["rebuild"]["rows"]
    found: dict[str, Any] = {}
    for name in ("duckdb", "dlt"):
        if name in results and results[name].get("limit") is None:
            found[f"{name}_rows_equal_rebuild"] = results[name]["rows"] == reference
    if "ingest" in results:
        per_partition = results["rebuild"]["partition_rows"]
        ingested = results["ingest"]["partition_rows"]
        found["ingest_rows_equal_rebuild_per_partition"] = all(
            per_partition.get(key) == rows for key, rows in ingested.items()
        )
    return found


def _paired_rebuild_cpu_ms(results: dict[str, Any]) -> float:
    """The mean CPU per conversation of the rebuilds run just before and just after the ingest."""
    runs = [results["rebuild_before_ingest"], results["rebuild_after_ingest"]]
    return sum(run["cpu_ms_per_conversation"] for run in runs) / len(runs)


def ratios(results: dict[str, Any]) -> dict[str, Any]:
    rebuild = results["rebuild"]
    out: dict[str, Any] = {
        "rebuild_vs_duckdb_throughput": rebuild["conversations_per_second"]
        / results["duckdb"]["conversations_per_second"],
        "rebuild_peak_tree_mb": rebuild["peak_tree_mb"],
        "ratelimited_achieved_vs_allowed_rate": results["ratelimited"]["achieved_rps"]
        / results["ratelimited"]["max_rps"],
    }
    if "ingest" in results:
        out["ingest_vs_rebuild_cpu_per_conversation"] = results["ingest"][
            "cpu_ms_per_conversation"
        ] / _paired_rebuild_cpu_ms(results)
    if "dlt" in results:
        out["rebuild_vs_dlt_throughput"] = (
            rebuild["conversations_per_second"] / results["dlt"]["conversations_per_second"]
        )
    return out


def markdown(report: dict[str, Any]) -> str:
    results, ratio = report["results"], report["ratios"]
    corpus = report["corpus"]["stats"]
    lines = [
        f"# Benchmark: {report['conversations']:,} conversations ({report['started_at']})",
        "",
        f"Corpus{' ' + report['corpus']['source'] if 'source' in report['corpus'] else ''}: "
        f"{corpus['mean_json_bytes']:,} bytes of JSON, {corpus['mean_turns']} turns and "
        f"{corpus['mean_spans']} spans per conversation on average; "
        f"{report['machine']['cpus']} CPUs, Python {report['machine']['python']}."
        + (
            f" {report['corpus']['unplaced_lines']:,} lines of the file could not be placed (no app "
            "name or startTime) and were left out."
            if report["corpus"].get("unplaced_lines")
            else ""
        ),
        "",
        "| approach | conversations | conv/s | spans/s | wall s | CPU ms/conv "
        "| peak RSS MB (largest process) | peak MB (process tree, PSS) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    labels = {
        "rebuild": "ces-pipeline rebuild (flatten + Parquet + warehouse)",
        "ingest": "ces-pipeline ingest over HTTP (fetch + rebuild path)",
        "duckdb": "DuckDB read_json + unnest (bench/sql)",
        "dlt": "dlt, Parquet loader, DuckDB",
    }
    for name, label in labels.items():
        if name not in results:
            continue
        r = results[name]
        lines.append(
            f"| {label} | {r['conversations']:,} | {r['conversations_per_second']:,.0f} | "
            f"{r['spans_per_second']:,.0f} | {r['seconds']:.1f} | {r['cpu_ms_per_conversation']:.2f} | "
            f"{r['peak_rss_mb']:,.0f} | {r['peak_tree_mb']:,.0f} |"
        )
    rate = results["ratelimited"]
    lines += [
        "",
        "| ratio | measured | target |",
        "| --- | ---: | --- |",
    ]
    if "rebuild_vs_dlt_throughput" in ratio:
        lines.append(f"| rebuild / dlt throughput | {ratio['rebuild_vs_dlt_throughput']:.1f}x | >= 10x |")
    per_round = ", ".join(f"{r['ratio']:.2f}x" for r in results["rounds"])
    lines += [
        f"| rebuild / DuckDB read_json throughput (median of {len(results['rounds'])} rounds: "
        f"{per_round}) | {ratio['rebuild_vs_duckdb_throughput']:.2f}x | >= 1.2x |",
        f"| rebuild peak memory, process tree (PSS) | {ratio['rebuild_peak_tree_mb']:.0f} MB | < 400 MB |",
        _ingest_ratio_row(results, ratio),
        f"| rate-limited fetch: achieved / allowed request rate | "
        f"{ratio['ratelimited_achieved_vs_allowed_rate']:.3f} ({rate['requests']} requests at "
        f"{rate['max_rps']:g}/s; after the first page, which took {rate['first_page_wait_ms']:.0f} ms, "
        f"largest gap {rate['max_gap_ms']:.0f} ms for a {rate['interval_ms']:.0f} ms interval, "
        f"{rate['gaps_over_1_5_intervals']} gaps over 1.5 intervals) | 1.0, no gaps |",
        "",
        "Row counts per table: "
        + ", ".join(f"{name}: {'equal' if ok else 'DIFFERENT'}" for name, ok in report["checks"].items()),
        "",
    ]
    if "ingest" in results:
        ingest = results["ingest"]
        extra_ms = ingest["cpu_ms_per_conversation"] - _paired_rebuild_cpu_ms(results)
        lines += [
            f"Ingest: {ingest['partitions']} partitions, {ingest['cpu_seconds']:.1f} s CPU in all: "
            f"the fetch's cost is what it spends beyond the paired rebuilds, "
            f"{extra_ms:.2f} ms per conversation.",
            "",
        ]
    return "\n".join(lines)


def _ingest_ratio_row(results: dict[str, Any], ratio: dict[str, Any]) -> str:
    if "ingest" not in results:
        return "| ingest / rebuild CPU per conversation | not run: an external corpus | <= 1.5x |"
    return (
        "| ingest / rebuild CPU per conversation "
        f"(ingest {results['ingest']['cpu_ms_per_conversation']:.2f} ms; rebuilds of its partitions "
        f"just before and after: {results['rebuild_before_ingest']['cpu_ms_per_conversation']:.2f} and "
        f"{results['rebuild_after_ingest']['cpu_ms_per_conversation']:.2f} ms) "
        f"| {ratio['ingest_vs_rebuild_cpu_per_conversation']:.2f}x | <= 1.5x |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="ces-pipeline against DuckDB read_json and dlt")
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=CorpusSpec.seed, help="the generated corpus's data seed")
    parser.add_argument("--days", type=int, default=60, help="days of history of each of the two apps")
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        default="real",
        help="the simulator's conversations, or reshaped as real traces",
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
    parser.add_argument("--skip-dlt", action="store_true")
    parser.add_argument(
        "--dlt-conversations",
        type=int,
        default=DLT_CONVERSATIONS,
        help=f"run dlt on the first N conversations only (default {DLT_CONVERSATIONS:,})",
    )
    parser.add_argument("--rate-limit", type=float, default=20.0, help="requests/s of the rate-limited fetch")
    parser.add_argument("--rate-conversations", type=int, default=600)
    args = parser.parse_args(argv)
    report = run(args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.corpus:
        stem = RESULTS / f"bench-{Path(args.corpus).name.split('.')[0]}"
    elif args.seed != CorpusSpec.seed:
        stem = RESULTS / f"bench-{report['conversations']}-seed{args.seed}"
    else:
        stem = RESULTS / f"bench-{report['conversations']}-{args.shape}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    stem.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
