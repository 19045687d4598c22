"""`query`, `report` and `mcp`: reading the warehouse."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.markup import escape

from pipelines.cli.common import TERMINAL_ROWS, console, out, print_rows, serve_until_stopped
from pipelines.config import Settings

if TYPE_CHECKING:
    from pipelines.warehouse.queries import NamedQuery


def cmd_query(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.warehouse.duck import Warehouse
    from pipelines.warehouse.queries import named_queries, parse_param_options, run_query

    if args.list or not args.name:
        _list_queries(named_queries(), args.format)
        return 0
    params = parse_param_options(args.param)
    columns, rows = run_query(Warehouse.from_settings(settings.storage), args.name, params)
    print_rows(columns, rows, args.format, limit=TERMINAL_ROWS if out.is_terminal else None)
    return 0


def _list_queries(queries: Sequence[NamedQuery], fmt: str) -> None:
    """Each query with its summary and parameters: lines for a person (never wrapped: a pipe gets
    whole lines), or json or csv for a program."""
    if fmt == "json":  # as the MCP server's list_queries gives it: one mapping for both
        from pipelines.serve.tool_outputs import QueryList

        listed = QueryList.model_validate({"queries": list(queries)}, from_attributes=True)
        print(json.dumps(listed.model_dump()["queries"], indent=2))
        return
    if fmt == "csv":
        print_rows(["name", "description"], [(query.name, query.description) for query in queries], "csv")
        return
    for query in queries:
        out.print(f"[bold]{query.name}[/bold]  {escape(query.description)}", soft_wrap=True)
        for parameter in query.parameters:
            line = f"    --param {parameter.signature()}  {parameter.description}"
            out.print(line, markup=False, highlight=False, soft_wrap=True)


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    from pipelines.report import write_report
    from pipelines.warehouse.duck import Warehouse

    warehouse = Warehouse.from_settings(settings.storage)
    target = args.out or settings.storage.report_path
    params = {
        key: value
        for key, value in (("app", args.app), ("since", args.since), ("until", args.until))
        if value is not None
    }
    with console.status("building the report"):
        report = write_report(warehouse, target, params)
    console.print(
        f"[green]report written to {escape(report.path)}: {report.charts} charts, {report.size_bytes:,} bytes"
    )
    out.print(report.path, markup=False)
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    """Serve the warehouse to agents: stdio (nothing else may write to stdout), or HTTP."""
    from pipelines.serve.reader import WarehouseReader
    from pipelines.serve.server import serve_http, serve_stdio
    from pipelines.warehouse.duck import Warehouse

    reader = WarehouseReader(Warehouse.from_settings(settings.storage), settings.serve)
    if not args.http:
        return serve_until_stopped(lambda: serve_stdio(reader), "the MCP server")
    return serve_until_stopped(
        lambda: serve_http(reader, args.host, args.port, announce=lambda url: print(url, flush=True)),
        "the MCP server",
    )
