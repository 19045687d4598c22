"""The SQL of the views over Parquet parts: the macro naming a relation's parts and the view
reading them, made by `parts` for a DuckDB file's current parts, and by `reading_apps` for one
app's rollups. Apart from `parts` so that a named query's command, which only reads, makes them
without importing the load side (the tables' Arrow schemas: 0.1 s of its start)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import duckdb

from pipelines.sqlfiles import quoted, sql_files, sql_text

Columns = Sequence[tuple[str, str]]
"""A relation's columns as its view shows them: (name, DuckDB type)."""


def window_days(parts_root: Path | None) -> str:
    """The relation of the days with conversations whose newest ends a trend's default window
    (`sql/macros/window_start.sql`): a DuckDB file's list of parts (`parts_root`), a DuckLake's
    daily_conversations rollup (a table)."""
    return "daily_conversations" if parts_root is None else sql_text("parts/conversation_days.sql")


def column_names(columns: Columns) -> str:
    return ", ".join(f'"{name}"' for name, _ in columns)


def _typed_nulls(columns: Columns) -> str:
    return ", ".join(f'CAST(NULL AS {kind}) AS "{name}"' for name, kind in columns)


DAY_KEY = "/partition_date="
"""The folder of a day part's day (hive style, which the views read the day from)."""
SUFFIX = ".parquet"


def list_parts(relation: str, macro: str, temporary: str, files: list[str]) -> str:
    """The statement that names `files`, parts of `relation` under the root, in the macro `macro`:
    each as `<app>/=<day>/<id>` or `<app>/folded/<id>`, without what every name of the list repeats
    (the relation's folder, the day's key, the suffix; `listed_parts.sql` puts them back). Stored
    in the catalog, which every load writes again: 2.8 MB at 2M conversations written whole, 2.0 MB
    compact."""
    prefix = f"{relation}/"
    if any("," in file for file in files):  # names are percent-encoded segments and hex ids
        raise ValueError(f"a part's name holds a comma: {next(file for file in files if ',' in file)}")
    if not all(file.startswith(prefix) and file.endswith(SUFFIX) for file in files):
        raise ValueError(f"a part of {relation} outside {prefix}: {files}")
    compact = [file[len(prefix) : -len(SUFFIX)].replace(DAY_KEY, "/=") for file in files]
    return sql_text("parts/parts_list.sql").format(
        temporary=temporary, macro=macro, files=quoted(",".join(compact))
    )


def view_of_parts(
    columns: Columns,
    temporary: str,
    relation: str,
    root: Path,
    day_files: Sequence[str],
    folded_files: Sequence[str],
    chosen: str | None = None,
    partial_files: Sequence[str] = (),
) -> str:
    """The view of the parts its macros name (`list_parts`): the day parts, the folded parts (of
    the days in the table `chosen` alone, if given), the folded parts some of whose days are
    hidden (`partial_files`), or none. Its statement depends on which kinds there are, not on the
    parts themselves."""
    if not day_files and not folded_files and not partial_files:
        return sql_text("parts/empty_view.sql").format(
            temporary=temporary, relation=relation, columns=_typed_nulls(columns)
        )
    names, sources = column_names(columns), []
    folder = f"{root}/{relation.rpartition('.')[2]}/"  # `relation`: the view's name, in its schema or not
    for listed, macro, kind in (
        (day_files, f"{relation}_files", "day_parts"),
        (folded_files, f"{relation}_folded_files", "chosen_folded_parts" if chosen else "folded_parts"),
        (partial_files, f"{relation}_partial_files", "partial_folded_parts"),
    ):
        if listed:
            files = sql_text("parts/listed_parts.sql").format(
                macro=macro, folder=quoted(folder), day_key=quoted(DAY_KEY), suffix=quoted(SUFFIX)
            )
            source = sql_text(f"parts/{kind}.sql")
            sources.append(source.format(columns=names, files=files, chosen=chosen, root=quoted(f"{root}/")))
    return sql_text("parts/raw_view.sql").format(
        temporary=temporary, relation=relation, sources="\nUNION ALL\n".join(sources)
    )


def own_database(conn: duckdb.DuckDBPyConnection) -> str:
    """The connection's database as a quoted identifier: `"<db>".main.<view>` names the file's
    view past a temporary object of the same name, which the temporary catalog's own `main`
    schema would find first."""
    ((database,),) = conn.execute(sql_text("warehouse/current_database.sql")).fetchall()
    return '"' + database.replace('"', '""') + '"'


@contextlib.contextmanager
def reading_apps(conn: duckdb.DuckDBPyConnection, root: Path | None, apps: Sequence[str]) -> Iterator[None]:
    """For the block, each rollup (`sql/rollups/`) kept as parts is a view of these apps' parts
    alone, shadowing its view of every app's: a question about one app opens that app's parts, not
    every app's (400 a rollup at 2M conversations). The default window stays every app's:
    `window_start` reads the file's list of parts, which no view shadows. No root (a DuckLake,
    whose rollups are tables) or no app (a question about every app): nothing changes."""
    if root is None or not apps:
        yield
        return
    rollups = {path.stem for path in sql_files("rollups")}  # as `rollups.rollup_names`, unimported
    listed = conn.execute(sql_text("parts/parts_view_columns.sql")).fetchall()
    kept = {name: [(column, kind) for column, kind in columns] for name, columns in listed if name in rollups}
    files: dict[str, list[str]] = {name: [] for name in kept}
    values = {"apps": list(apps), "relations": list(kept)}
    for relation, _, _, file in conn.execute(sql_text("parts/app_parts.sql"), values).fetchall():
        files[relation].append(file)
    for name, columns in kept.items():
        conn.execute(list_parts(name, f"{name}_files", "TEMP", files[name]))
        conn.execute(view_of_parts(columns, "TEMP", name, root, files[name], []))
    try:
        yield
    finally:
        for name in kept:
            conn.execute(sql_text("parts/drop_temporary_view.sql").format(relation=name))
