"""`make bench`'s figures set against the targets, and its report in Markdown."""

from __future__ import annotations

from typing import Any

from bench.profiling import PHASES


def checks(results: dict[str, Any]) -> dict[str, Any]:
    """Row counts: every full-corpus approach equal to rebuild; ingest equal partition by partition."""
    reference = results["rebuild"]["rows"]
    found: dict[str, Any] = {}
    for name in ("duckdb", "dlt"):
        if name in results and results[name].get("limit") is None:
            found[f"{name}_rows_equal_rebuild"] = results[name]["rows"] == reference
    per_partition = results["rebuild"]["partition_rows"]
    if "ingest" in results:
        ingested = results["ingest"]["partition_rows"]
        found["ingest_rows_equal_rebuild_per_partition"] = all(
            per_partition.get(key) == rows for key, rows in ingested.items()
        )
    if "backfill" in results:
        found["backfill_rows_equal_rebuild_per_partition"] = (
            results["backfill"]["partition_rows"] == per_partition
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
    }
    if "dlt" in results:
        out["rebuild_vs_dlt_throughput"] = (
            rebuild["conversations_per_second"] / results["dlt"]["conversations_per_second"]
        )
    if "ingest" in results:
        out["ingest_vs_rebuild_cpu_per_conversation"] = results["ingest"][
            "cpu_ms_per_conversation"
        ] / _paired_rebuild_cpu_ms(results)
    if "ratelimited" in results:
        rate = results["ratelimited"]
        out["ratelimited_achieved_vs_allowed_rate"] = rate["achieved_rps"] / rate["max_rps"]
        out["ratelimited_cpu_share_of_one_core"] = rate["cpu_share"]["requests"]
    for name in PROJECT_APPROACHES:
        if name in results:
            out[f"{name}_peak_process_mb"] = results[name]["peak_rss_mb"]
            out[f"{name}_peak_tree_mb"] = results[name]["peak_tree_mb"]
    return out


PROJECT_APPROACHES = {
    "rebuild": "rebuild",
    "ingest": "ingest",
    "ratelimited": "ingest at the rate limit",
    "backfill": "Dagster backfill",
}
"""The project's own runs, whose memory is held to the targets."""

TARGETS = {
    "rebuild_vs_duckdb_throughput": (1.2, ">= 1.2x"),
    "rebuild_vs_dlt_throughput": (10.0, ">= 10x"),
    "ingest_vs_rebuild_cpu_per_conversation": (2.0, "<= 2x"),
    "ratelimited_achieved_vs_allowed_rate": (0.98, ">= 0.98"),
    "ratelimited_cpu_share_of_one_core": (0.05, "<= 5%"),
    "peak_process_mb": (400.0, "< 400 MB"),
    "peak_tree_mb": (800.0, "< 800 MB"),
}
"""The issue's targets: the bound, and how the report states it (>= a floor, else a ceiling)."""


def _met(target: str, value: float) -> str:
    bound, text = TARGETS[target]
    ok = value >= bound if text.startswith(">") else value <= bound if "=" in text else value < bound
    return "yes" if ok else "**NO**"


def _target_rows(report: dict[str, Any]) -> list[str]:
    results, ratio, skipped = report["results"], report["ratios"], report["skipped"]
    rows = []

    def row(label: str, measured: str, target: str, value: float | None) -> None:
        met = _met(target, value) if value is not None else "not run"
        rows.append(f"| {label} | {measured} | {TARGETS[target][1]} | {met} |")

    per_round = ", ".join(f"{r['ratio']:.2f}x" for r in results["rounds"])
    value = ratio["rebuild_vs_duckdb_throughput"]
    row(
        f"rebuild / DuckDB read_json throughput (median of {len(results['rounds'])} rounds: {per_round})",
        f"{value:.2f}x",
        "rebuild_vs_duckdb_throughput",
        value,
    )
    if "dlt" in results:
        value = ratio["rebuild_vs_dlt_throughput"]
        subset = results["dlt"].get("limit")
        note = f" (dlt on the first {subset:,} conversations)" if subset else ""
        row(f"rebuild / dlt throughput{note}", f"{value:.1f}x", "rebuild_vs_dlt_throughput", value)
    else:
        row("rebuild / dlt throughput", f"not run: {skipped['dlt']}", "rebuild_vs_dlt_throughput", None)
    if "ingest" in results:
        value = ratio["ingest_vs_rebuild_cpu_per_conversation"]
        row(
            "ingest (rate limit lifted) / rebuild CPU per conversation "
            f"(ingest {results['ingest']['cpu_ms_per_conversation']:.2f} ms; rebuilds of its partitions "
            f"just before and after: {results['rebuild_before_ingest']['cpu_ms_per_conversation']:.2f} and "
            f"{results['rebuild_after_ingest']['cpu_ms_per_conversation']:.2f} ms)",
            f"{value:.2f}x",
            "ingest_vs_rebuild_cpu_per_conversation",
            value,
        )
    else:
        why = skipped.get("ingest", "")
        row(
            "ingest / rebuild CPU per conversation",
            f"not run: {why}",
            "ingest_vs_rebuild_cpu_per_conversation",
            None,
        )
    if "ratelimited" in results:
        rate = results["ratelimited"]
        value = ratio["ratelimited_achieved_vs_allowed_rate"]
        row(
            f"`ces-pipeline ingest` at {rate['max_rps']:g} requests/s: achieved / allowed request rate "
            f"({rate['requests']} requests; after the first page, which took "
            f"{rate['first_page_wait_ms']:.0f} ms, largest gap {rate['max_gap_ms']:.0f} ms for a "
            f"{rate['interval_ms']:.0f} ms interval, "
            f"{rate['gaps_over_1_5_intervals']} gaps over 1.5 intervals)",
            f"{value:.3f}",
            "ratelimited_achieved_vs_allowed_rate",
            value,
        )
        share = rate["cpu_share"]
        row(
            f"`ces-pipeline ingest` at {rate['max_rps']:g} requests/s: CPU share of one core while the "
            f"requests went out ({rate['requests_cpu_seconds']:.2f} s CPU in "
            f"{rate['requests_seconds']:.1f} s; "
            f"the whole command {share['command']:.0%}: {rate['command_cpu_seconds']:.1f} s in "
            f"{rate['seconds']:.1f} s with its flatten, load and Dagster runs; the whole process "
            f"{share['process']:.0%}: {rate['cpu_seconds']:.1f} s in {rate['process_wall_seconds']:.1f} s "
            "with the interpreter's start)",
            f"{share['requests']:.1%}",
            "ratelimited_cpu_share_of_one_core",
            share["requests"],
        )
    for key, label in (
        ("peak_process_mb", "peak RSS, largest process"),
        ("peak_tree_mb", "peak memory, process tree (PSS)"),
    ):
        found = {name: ratio[f"{name}_{key}"] for name in PROJECT_APPROACHES if f"{name}_{key}" in ratio}
        measured = ", ".join(f"{PROJECT_APPROACHES[name]} {mb:,.0f} MB" for name, mb in found.items())
        row(label, measured, key, max(found.values()))
    return rows


def markdown(report: dict[str, Any]) -> str:
    results = report["results"]
    corpus = report["corpus"]["stats"]
    lines = [
        f"# Benchmark: {report['conversations']:,} conversations, {report['shape']} shape "
        f"({report['started_at']})",
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
    ]
    if report["skipped"]:
        lines += ["Not run: " + "; ".join(f"{name} ({why})" for name, why in report["skipped"].items()), ""]
    lines += [
        "| approach | conversations | conv/s | spans/s | wall s | CPU ms/conv "
        "| peak RSS MB (largest process) | peak MB (process tree, PSS) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    labels = {
        "rebuild": "`ces-pipeline rebuild` (flatten + Parquet + warehouse)",
        "ingest": "`ces-pipeline ingest` over HTTP, rate limit lifted (fetch + rebuild path)",
        "backfill": "Dagster backfill by `dagster-daemon` (the rebuild job's assets)",
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
    lines += ["", "| target | measured | target | met |", "| --- | ---: | --- | --- |", *_target_rows(report)]
    lines += [
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
    if "phases" in results:
        lines += _phase_lines(results["phases"])
    if "backfill" in results:
        lines += _backfill_lines(results["backfill"], report["checks"])
    return "\n".join(lines)


def _phase_lines(phases: dict[str, Any]) -> list[str]:
    names = list(phases)
    lines = [
        "## CPU per phase",
        "",
        "Shares from a sampled run (bench/profiling.py: every 5 ms, the CPU each thread used is "
        "charged to the phase of the code it is in; DuckDB's worker threads count for the call "
        "waiting on them), scaled to the measured CPU of the unprofiled run's command: "
        + ", ".join(f"{name} {phases[name]['command_cpu_ms_per_conversation']:.2f} ms" for name in names)
        + " per conversation (the table above counts the whole process, with the interpreter's "
        "start and the bench's own row counts).",
        "",
        "| phase | " + " | ".join(f"{name} ms/conv | {name} share" for name in names) + " |",
        "| --- |" + " ---: | ---: |" * len(names),
    ]
    for phase, description in PHASES.items():
        cells = " | ".join(
            f"{phases[name]['ms_per_conversation'][phase]:.3f} | {phases[name]['shares'][phase]:.1%}"
            for name in names
        )
        lines.append(f"| {description} | {cells} |")
    lines.append("")
    for name in names:
        sampled = phases[name]
        total = sum(sampled["functions"].values()) or 1.0
        top = ", ".join(
            f"`{where}` {seconds / total:.0%}" for where, seconds in list(sampled["functions"].items())[:6]
        )
        lines.append(
            f"{name}: {sampled['samples']:,} samples, the sampled run's command "
            f"{sampled['sampled_command_cpu_seconds']:.1f} s CPU against "
            f"{sampled['unprofiled_command_cpu_seconds']:.1f} s unprofiled (the sampler itself "
            f"{sampled['sampler_seconds']:.2f} s{_drift(sampled)}); "
            f"{sampled['native_seconds']:.1f} s ran outside Python threads. Functions on top of the stack "
            f"(their own CPU, C calls included): {top}."
        )
        lines.append("")
    return lines


def _drift(sampled: dict[str, Any]) -> str:
    ratio = sampled["sampled_command_cpu_seconds"] / sampled["unprofiled_command_cpu_seconds"]
    if abs(ratio - 1) <= 0.15:
        return ""
    return "; the two differ by more than 15%: the machine's load changed between them"


def _backfill_lines(backfill: dict[str, Any], found: dict[str, Any]) -> list[str]:
    b = backfill
    sizes = ", ".join(f"{count} of {size}" for size, count in sorted(b["partitions_per_run"].items()))
    statuses = ", ".join(f"{count} {status}" for status, count in b["runs_by_status"].items())
    equal = found.get("backfill_rows_equal_rebuild_per_partition")
    return [
        "## Dagster backfill",
        "",
        f"{b['partitions']} partitions of `lake/conversation_tables` and "
        "`warehouse/conversation_tables` (the `rebuild_conversations` job's assets), backfilled as "
        "from the UI: added to the instance as the UI's `launchPartitionBackfill` adds an asset "
        "selection's backfill, and run by `dagster-daemon run -m pipelines.definitions` (the "
        "project's `dagster.yaml`), started beforehand. "
        f"Backfill {b['status']}: Dagster launched {b['runs']} runs ({statuses}; partitions per "
        f"run: {sizes}). Wall {b['seconds']:.1f} s from submission to the backfill's completion "
        f"({b['conversations_per_second']:,.0f} conv/s): the first run started after "
        f"{b['first_run_started_after']:.1f} s, the last one ended after "
        f"{b['last_run_ended_after']:.1f} s (the runs' own wall times add up to "
        f"{b['run_seconds']:.1f} s): the backfill daemon looks at backfills every 30 s "
        "(Dagster's DEFAULT_DAEMON_INTERVAL_SECONDS) and the run queue is read every 5 s; each "
        "run is a process of its own, up to `max_concurrent_runs` at a time. "
        f"CPU {b['cpu_seconds']:.1f} s for the process tree "
        f"({b['processes']} processes: the daemon and its threads' subprocesses from its start, its "
        f"code server, the runs; rusage of the waited-for ones {b['waited_cpu_seconds']:.1f} s, "
        f"/proc samples {b['sampled_tree_cpu_seconds']:.1f} s). Warehouse rows per table and "
        f"partition equal the rebuild's: {'yes' if equal else '**NO**'}.",
        "",
    ]
