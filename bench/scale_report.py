"""The scale bench's figures set against the targets, and its report in Markdown."""

from __future__ import annotations

from typing import Any

BASE = 20_000
"""Conversations of one replica: the bench corpus (19,920 once split into 60 days of two apps)."""
ROUNDS = 3
"""Each quick command runs this many times; its median is reported."""
Check = dict[str, Any]
"""One target: `measure`, the `measured` figure, the `target`, and `met`."""


def _ratio(value: float, base: float) -> float:
    return value / base if base else float("inf")


def checks(size: dict[str, Any], base: dict[str, Any]) -> list[Check]:
    """Each target for one size, its figure set against `base` (the smallest size of the
    invocation) where the target is a ratio or the ratio says how the figure grew."""
    found: list[Check] = []

    def check(what: str, measured: str, ratio: float | None, target: str, met: bool) -> None:
        found.append({"measure": what, "measured": measured, "ratio": ratio, "target": target, "met": met})

    rebuild = size["rebuild"]
    speed = _ratio(rebuild["conversations_per_second"], base["rebuild"]["conversations_per_second"])
    measured = f"{rebuild['conversations_per_second']:,.0f} conv/s"
    check("whole rebuild throughput", measured, speed, ">= 0.8x base", speed >= 0.8)
    day, base_day = size["one_day"], base["one_day"]
    slower = _ratio(day["seconds"], base_day["seconds"])
    check("one-app-day rebuild time", f"{day['seconds']:.2f} s", slower, "<= 1.5x base", slower <= 1.5)
    rss = day["peak_rss_mb"]
    check(
        "one-app-day rebuild peak RSS",
        f"{rss:,.0f} MB",
        _ratio(rss, base_day["peak_rss_mb"]),
        "< 400 MB",
        rss < 400,
    )
    own, base_own = _warehouse_written(day), _warehouse_written(base_day)
    written = _ratio(own * 2**20, day["partition_bytes"])
    measured = f"{own:,.1f} MB, {written:,.1f}x the day's own data"
    what = "by the warehouse" if day.get("written_by") else "in all"
    target = "<= 2x the day's data"
    check(f"one-app-day rebuild disk written {what}", measured, _ratio(own, base_own), target, written <= 2)
    hourly, base_hourly = size["hourly"], base["hourly"]
    slower = _ratio(hourly["seconds"], base_hourly["seconds"])
    check("hourly schedule's run time", f"{hourly['seconds']:.2f} s", slower, "<= 1.5x base", slower <= 1.5)
    rss = hourly["peak_rss_mb"]
    ratio = _ratio(rss, base_hourly["peak_rss_mb"])
    check("hourly schedule's run peak RSS", f"{rss:,.0f} MB", ratio, "< 400 MB", rss < 400)
    for kind, asked in (("queries", ""), ("app_queries", ", one app")):  # rows: the answer's size
        for name, query in size[kind].items():
            ratio = _ratio(query["seconds"], base[kind][name]["seconds"])
            met = query["seconds"] <= 1.0 and ratio <= 1.5
            shown = f"{query['seconds']:.2f} s" + (f", {query['rows']:,} rows" if "rows" in query else "")
            check(f"`query {name}`{asked}", shown, ratio, "<= 1.0 s and <= 1.5x base", met)
    report = size["report"]
    measured = f"{report['seconds']:.2f} s, {report['peak_rss_mb']:,.0f} MB"
    ratio = _ratio(report["seconds"], base["report"]["seconds"])
    check(
        "`report`",
        measured,
        ratio,
        "<= 5 s and < 500 MB",
        report["seconds"] <= 5 and report["peak_rss_mb"] < 500,
    )
    for name, answer in size["mcp"].items():
        same = "the CLI's rows" if answer["same_as_cli"] else "**rows differ from the CLI's**"
        cut = f" (first {answer['rows']:,}: capped)" if answer["truncated"] else ""
        measured = f"{answer['seconds']:.3f} s, {same}{cut}"
        ratio = _ratio(answer["seconds"], base["mcp"][name]["seconds"])
        met = answer["seconds"] <= 1 and answer["same_as_cli"]
        check(f"`run_query {name}`", measured, ratio, "<= 1 s, the CLI's rows", met)
    return found


def _warehouse_written(day: dict[str, Any]) -> float:
    """MB a one-day load wrote to the warehouse's own files, where traced; else all it wrote."""
    by = day.get("written_by")
    if not by:
        return day["disk_written_mb"]
    return sum(mb for place, mb in by.items() if place.startswith("warehouse"))


def _places(by: dict[str, float] | None) -> str:
    if not by:
        return ""
    return " (traced: " + ", ".join(f"{place} {mb:,.1f} MB" for place, mb in by.items()) + ")"


def markdown(report: dict[str, Any]) -> str:
    sizes = report["sizes"]
    base = sizes[0] if sizes else {"conversations": BASE}
    counts = ", ".join(f"{size['conversations']:,}" for size in sizes)
    lines = [
        f"# Scale: {report['shape']} shape, {report['warehouse']} warehouse, {counts} conversations "
        f"({report['started_at']})",
        "",
        f"The bench corpus ({report['corpus']['stats']['conversations']:,} conversations over 60 days of two "
        f"apps) replicated under new app names; each size rebuilt from an empty warehouse with "
        f"`ces-pipeline rebuild`, then measured with the installed `ces-pipeline` (default settings), "
        f"medians of {ROUNDS} where stated; ratios against {base['conversations']:,} conversations. "
        f"{report['machine']['cpus']} CPUs, Python {report['machine']['python']}.",
        "",
    ]
    for size in sizes:
        rebuild, day, report_run, hourly = size["rebuild"], size["one_day"], size["report"], size["hourly"]
        results = size["checks"]
        lines += [
            f"## {size['conversations']:,} conversations ({size['apps']} apps, "
            f"{size['partitions']:,} partitions; "
            f"{size['seconds']:,.0f} s in all, {size['growth_seconds']:,.0f} s of it writing "
            f"{size['replica_files']:,} replica files)",
            "",
            f"Warehouse {size['warehouse_mb']:,.0f} MB holding "
            f"{size['warehouse_conversations']:,} conversations. "
            f"Whole rebuild: {rebuild['seconds']:,.1f} s, {rebuild['conversations_per_second']:,.0f} conv/s, "
            f"peak RSS {rebuild['peak_rss_mb']:,.0f} MB, {rebuild['disk_written_mb']:,.0f} MB written"
            f"{_reused(size)}. "
            f"One app-day ({day['day']} of `{day['app'].rsplit('/', 1)[1]}`, median of {ROUNDS}): "
            f"{day['seconds']:.2f} s, peak RSS {day['peak_rss_mb']:,.0f} MB, "
            f"{day['disk_written_mb']:,.1f} MB written{_places(day.get('written_by'))} for "
            f"{day['partition_bytes'] / 2**20:,.2f} MB of its own Parquet. "
            f"The hourly schedule's run (`ces-pipeline ingest` of {hourly['since']} to {hourly['until']}, "
            f"the simulator's rate limit lifted, median of {ROUNDS}): {hourly['seconds']:.2f} s, peak RSS "
            f"{hourly['peak_rss_mb']:,.0f} MB, {hourly['disk_written_mb']:,.1f} MB written. Report: "
            f"{report_run['seconds']:.2f} s, peak RSS {report_run['peak_rss_mb']:,.0f} MB. "
            f"`ces-pipeline query --list`, which reads nothing, takes {size['startup']['seconds']:.2f} s: "
            "each command's start, in every query's time below.",
            "",
            f"Targets met: {sum(c['met'] for c in results)} of {len(results)}.",
            "",
            f"| measure | measured | x {base['conversations']:,} | target | result |",
            "| --- | ---: | ---: | --- | --- |",
            *(
                f"| {c['measure']} | {c['measured']} | {c['ratio']:.2f}x | {c['target']} | "
                f"{'PASS' if c['met'] else '**FAIL**'} |"
                for c in results
            ),
            "",
        ]
    if "failed" in report:
        failed = report["failed"]
        lines += [
            f"## {failed['conversations']:,} conversations: FAILED after {failed['seconds']:,.0f} s",
            "",
        ]
        lines += [f"{failed['error']} (its output above, in the terminal).", ""]
    return "\n".join(lines)


def _reused(size: dict[str, Any]) -> str:
    """What `--reuse` changes: the rebuild measured is an earlier run's, and the warehouse was
    loaded once with this code before the figures below (the first load after an upgrade)."""
    if not size.get("reused"):
        return ""
    first = size["first_load"]
    return (
        f" (by an earlier run, finished {size['rebuild'].get('finished_at', 'before')}; the first load "
        f"of its app-day with this code took {first['seconds']:.2f} s and {first['peak_rss_mb']:,.0f} MB)"
    )
