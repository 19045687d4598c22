"""The conversation tables of a DuckDB-file warehouse: immutable Parquet files ("parts") in a
folder beside the file (`<file>.parts`), read through views (each table's own, over the view
`parts.<table>` that lists its files). A recent (app, day) partition has a part of its own per
table; an app's days a week older than its newest are folded into one part a week, then a month
(`folding`), so that the lists, and what binding them costs every query, grow with apps and months,
not days.

A load publishes a new copy of the warehouse file (`publish`), so that a BI tool holding the
file open never blocks it. Were the conversation tables in the file, every load would copy the
whole history. Instead the file holds the views, the evaluation tables, the rejects and the list
of current parts (`warehouse_parts`): a load writes new parts for the partitions it replaces
(and for the days a moved conversation left), folds what has aged, lists them in its copy of the
file, and publishes that copy. The daily rollups are parts too, one per rollup, app and month
(`rollups`, listed under the month's first day), read through views of their own as the tables
are: in the file, they were most of what every load copied (5.6 of its 7.4 MB of data at 200k
conversations). A reader's file lists the parts of the state it opened, and those parts stay on
disk while any reader holds a file that lists them (`garbage`): the cost of a load is its own
partitions plus a file that grows with the number of parts, not of rows.

Each published file is also linked under `<file>.parts/versions/`, so that a file replaced by a
newer one keeps a name: whether a reader still holds it is whether DuckDB's lock is on it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date
from pathlib import Path

import duckdb

from pipelines.durable import fsync_directory
from pipelines.lake.paths import app_segment
from pipelines.sqlfiles import quoted, sql_text
from pipelines.transform.schemas import CONVERSATION_TABLES, CONVERSATIONS, TableSpec
from pipelines.warehouse.part_views import Columns, column_names, list_parts, own_database, view_of_parts
from pipelines.warehouse.publish import next_version
from pipelines.warehouse.types import duckdb_type, spec_columns

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""DuckDB's name for a NULL partition value in a path (rows of an older release without a day)."""

PARTS_SCHEMA = "parts"
"""The schema of the views that list each conversation table's parts (`install_views`)."""
BOOKKEEPING = frozenset(
    {"warehouse_parts", "warehouse_retired_parts", "warehouse_publications", "warehouse_hidden_days"}
)
"""The tables of `sql/parts/create_manifest.sql`: how the file is stored, not what it holds."""

FOLDED = "folded"
"""The folder, beside an app's day folders of a table, of its folded parts."""
READING = "reading_folded_days"
"""The table of the folded parts' days that temporary views of a few partitions read."""
Partition = tuple[str, date]
PART_ID_BYTES = 6
"""A part's name in its folder: 12 random hex digits. Each name is in the list of parts the file
holds, in its catalog and in `warehouse_parts` (27,000 parts at 2M conversations), which every
load copies and writes again: a 32-digit uuid made them a third longer."""
TABLE_NAMES = [spec.name for spec in CONVERSATION_TABLES]


def is_folded(file: str) -> bool:
    """Whether a part (its name under the root) is a folded part, of many days, or a day part."""
    return f"/{FOLDED}/" in file


def file_columns(spec: TableSpec) -> str:
    """The columns a part holds: the table's but the day, which its path gives, each of the
    table's type (a lake file keeps JSON as text)."""
    return ", ".join(
        f'CAST("{field.name}" AS {duckdb_type(spec, field)}) AS "{field.name}"' for field in spec.schema
    )


def install_views(
    conn: duckdb.DuckDBPyConnection,
    root: Path,
    *,
    only: Sequence[Partition] | None = None,
) -> bool:
    """List each relation's current parts (the conversation tables', and those of every other
    relation kept as parts: the rollups) in the macros `parts.<relation>_files()` (day parts) and
    `parts.<relation>_folded_files()` (folded parts), read by the view `parts.<relation>`, read in
    turn by the relation's own view (`main.<relation>`). A load replaces the macros alone: the
    views are made when their statement changes (no part yet, a first folded part, a new root or
    release), so that a load binds no view of every part and readers' views keep their
    descriptions. `only`: temporary views over those partitions' conversation rows alone, which
    shadow the tables for the rest of the transaction (a load computes its partitions' rollups
    from them without opening every part). Whether a relation's own view was made, and so has
    no description yet."""
    if only is not None:
        chosen = _files_of(conn, only)
        choose_days(
            conn, READING, [(str(root / file), day) for _, folded in chosen.values() for file, day in folded]
        )
        for spec in CONVERSATION_TABLES:
            day_files, folded = chosen.get(spec.name, ([], []))
            folded_files = sorted({file for file, _ in folded})
            conn.execute(list_parts(spec.name, f"{spec.name}_files", "TEMP", day_files))
            conn.execute(list_parts(spec.name, f"{spec.name}_folded_files", "TEMP", folded_files))
            columns = spec_columns(spec)
            conn.execute(view_of_parts(columns, "TEMP", spec.name, root, day_files, folded_files, READING))
        return False
    listed: dict[str, Columns] = {
        name: [(column, kind) for column, kind in columns]
        for name, columns in conn.execute(sql_text("parts/parts_view_columns.sql")).fetchall()
    }
    listed |= {spec.name: spec_columns(spec) for spec in CONVERSATION_TABLES}
    return install_relations(conn, root, listed)


def install_relations(conn: duckdb.DuckDBPyConnection, root: Path, listed: Mapping[str, Columns]) -> bool:
    """`install_views` for these relations (name: columns); whether a relation's own view was made."""
    conn.execute(sql_text("parts/create_parts_schema.sql"))
    made_from = dict(conn.execute(sql_text("parts/parts_view_definitions.sql")).fetchall())
    partial = {file for (file,) in conn.execute(sql_text("parts/partial_parts.sql")).fetchall()}
    for name, columns in listed.items():
        relation = f"{PARTS_SCHEMA}.{name}"
        rows = conn.execute(sql_text("parts/relation_parts.sql"), {"relation": name}).fetchall()
        day_files = [file for (file,) in rows if not is_folded(file)]
        folded_files = [file for (file,) in rows if is_folded(file) and file not in partial]
        partial_files = [file for (file,) in rows if file in partial]
        conn.execute(list_parts(name, f"{relation}_files", "", day_files))
        conn.execute(list_parts(name, f"{relation}_folded_files", "", folded_files))
        conn.execute(list_parts(name, f"{relation}_partial_files", "", partial_files))
        view = view_of_parts(
            columns, "", relation, root, day_files, folded_files, partial_files=partial_files
        )
        definition = hashlib.sha256(view.encode()).hexdigest()[:16]
        if made_from.get(name) != definition:
            conn.execute(view)
            described = sql_text("parts/describe_parts_view.sql")
            conn.execute(described.format(relation=name, definition=quoted(definition)))
    reading = {
        name: (list(columns), text)
        for name, columns, text in conn.execute(sql_text("parts/table_views.sql")).fetchall()
    }
    made = False
    for name, columns in listed.items():
        found = reading.get(name)
        names = [column for column, _ in columns]
        if found is None or found[0] != names or f"FROM {PARTS_SCHEMA}.{name}" not in found[1]:
            text = sql_text("parts/table_view.sql").format(relation=name, columns=column_names(columns))
            conn.execute(text)
            made = True
    return made


def choose_days(conn: duckdb.DuckDBPyConnection, chosen: str, days: Sequence[tuple[str, date]]) -> None:
    """The table `chosen`: the days (file path, day) a statement reads of folded parts."""
    conn.execute(sql_text("parts/create_chosen_days.sql").format(chosen=chosen))
    if days:
        conn.executemany(
            sql_text("parts/insert_chosen_day.sql").format(chosen=chosen),
            [{"file": file, "day": day} for file, day in days],
        )


def _files_of(
    conn: duckdb.DuckDBPyConnection, partitions: Sequence[Partition]
) -> dict[str, tuple[list[str], list[tuple[str, date]]]]:
    """The current parts of these partitions, per table: its day parts, and its folded parts with
    each day chosen of them."""
    files: dict[str, tuple[list[str], list[tuple[str, date]]]] = {}
    for app, day in sorted(set(partitions), key=lambda partition: (partition[1], partition[0])):
        for relation, file in conn.execute(
            sql_text("parts/partition_parts.sql"), {"app": app, "day": day, "relations": TABLE_NAMES}
        ).fetchall():
            day_files, folded = files.setdefault(relation, ([], []))
            if is_folded(file):
                folded.append((file, day))
            else:
                day_files.append(file)
    return files


@contextlib.contextmanager
def reading_only(
    conn: duckdb.DuckDBPyConnection, root: Path | None, partitions: Sequence[Partition]
) -> Iterator[None]:
    """For the block, the conversation tables are views of these partitions' parts alone: a
    query about a few partitions binds their files, not every part's list (0.1-0.2 s a table at
    12,000 partitions). `root` None, a DuckLake, whose tables are tables: its conversations are
    those of the partitions' days and apps (their ranges), and the views joining them read the
    other tables' rows of those conversations alone (`bounded_conversations.sql`): a load of one
    app-month of a 20-app lake computed its rollups in 1.3 s instead of 4.8 s, reading one app's
    spans instead of every app's of the month."""
    if root is None:
        _bound_lake_tables(conn, partitions)
    else:
        install_views(conn, root, only=partitions)
    try:
        yield
    finally:
        for spec in CONVERSATION_TABLES:
            conn.execute(sql_text("parts/drop_temporary_view.sql").format(relation=spec.name))
        conn.execute(sql_text("parts/drop_chosen_days.sql").format(chosen=READING))


def _bound_lake_tables(conn: duckdb.DuckDBPyConnection, partitions: Sequence[Partition]) -> None:
    """`reading_only` on a DuckLake: temporary views of its conversation tables bounded by the
    partitions' days and apps (none: no bound)."""
    if not partitions:
        return
    apps, days = sorted(app for app, _ in partitions), sorted(str(day) for _, day in partitions)
    database = own_database(conn)
    conn.execute(
        sql_text("warehouse/bounded_conversations.sql").format(
            database=database,
            first=quoted(days[0]),
            last=quoted(days[-1]),
            first_app=quoted(apps[0]),
            last_app=quoted(apps[-1]),
        )
    )
    for spec in CONVERSATION_TABLES:
        if spec is not CONVERSATIONS:
            conn.execute(
                sql_text("warehouse/bounded_conversation_rows.sql").format(
                    relation=spec.name, database=database, first=quoted(days[0]), last=quoted(days[-1])
                )
            )


def reading_app(
    conn: duckdb.DuckDBPyConnection, root: Path | None, app: str | None
) -> contextlib.AbstractContextManager[None]:
    """`reading_only` the partitions of the app's conversations (found in the list of parts, no
    part read): a lookup costs that app's history, not every app's. `app` None: every app's."""
    if root is None or app is None:
        return reading_only(conn, None, [])
    found = conn.execute(sql_text("parts/app_conversation_parts.sql"), {"apps": [app]}).fetchall()
    return reading_only(conn, root, [(found_app, day) for found_app, day, _ in found])


def part_folder(relation: str, app: str | None, day: date | None) -> str:
    """A table's partition's folder under the root (a part of no app or day: an older release's)."""
    segment = app_segment(app) if app is not None else "_none"
    return f"{relation}/{segment}/partition_date={day.isoformat() if day is not None else NULL_PARTITION}"


class PartWriter:
    """The parts one load writes: listed in its copy of the file, durable before it is published,
    deleted again if the load fails."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, root: Path):
        self.conn, self.root = conn, root
        self.written: list[Path] = []
        self._known: set[str] | None = None

    def write(
        self, statement: str, spec: TableSpec, app: str | None, day: date | None, source: str | None = None
    ) -> int:
        """Run `sql/parts/STATEMENT.sql`, a COPY of one partition's rows of `spec` (from the
        Parquet file `source`, or the table still in the file) to a new part; the rows it wrote
        (a part of none is not kept)."""
        relative, path = self.new_part(part_folder(spec.name, app, day))
        text = sql_text(f"parts/{statement}.sql").format(
            relation=spec.name,
            table=spec.name,
            columns=file_columns(spec),
            target=quoted(str(path)),
        )
        values = {"app": app, "day": day} | ({"source": source} if source is not None else {})
        ((rows,),) = self.conn.execute(text, values).fetchall()
        if not rows:
            path.unlink()
        self.record(spec.name, app, [(day, relative if rows else None, rows)])
        return int(rows)

    def new_part(self, folder: str) -> tuple[str, Path]:
        """A new part's name under the root and its path, in `folder` (swept of what a killed
        load left there), deleted again if the load fails."""
        self._sweep(folder)
        relative = f"{folder}/{secrets.token_hex(PART_ID_BYTES)}.parquet"
        while (self.root / relative).exists():  # one chance in 2**48 a name, in a folder of a few
            relative = f"{folder}/{secrets.token_hex(PART_ID_BYTES)}.parquet"
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        self.written.append(path)
        return relative, path

    def record(
        self, relation: str, app: str | None, days: Iterable[tuple[date | None, str | None, int]]
    ) -> None:
        """List each (day, part or None if it has no row, rows) of `relation`'s `app` in place of
        its current part, once the load publishes."""
        self.conn.executemany(
            sql_text("parts/record_written_part.sql"),
            [
                {"relation": relation, "app": app, "day": day, "file": file, "rows": rows}
                for day, file, rows in days
            ],
        )

    def _sweep(self, folder: str) -> None:
        """Delete what a killed load left in `folder`: parts no file lists."""
        if self._known is None:
            self._known = {
                file for (file,) in self.conn.execute(sql_text("parts/known_parts.sql")).fetchall()
            }
        for path in (self.root / folder).glob("*.parquet"):
            if f"{folder}/{path.name}" not in self._known and path not in self.written:
                path.unlink()

    def publish(self, version: int) -> None:
        """List the parts written in place of those of their (table, app, day), which publication
        `version` retires."""
        self.conn.execute(sql_text("parts/retire_replaced_parts.sql"))
        self.conn.execute(sql_text("parts/swap_written_parts.sql"))
        self.conn.execute(sql_text("parts/retire_unlisted_parts.sql"), {"version": version})
        self.conn.execute(sql_text("parts/forget_hidden_days.sql"))

    def sync(self) -> None:
        """Every part on disk, and its folder entry, before the file listing it is published."""
        folders = set()
        for path in self.written:
            if path.exists():
                with open(path, "rb") as handle:
                    os.fsync(handle.fileno())
                folders.add(path.parent)
        for folder in folders:
            fsync_directory(str(folder))

    def discard(self) -> None:
        for path in self.written:
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def part_writer(conn: duckdb.DuckDBPyConnection, root: Path) -> Iterator[PartWriter]:
    conn.execute(sql_text("parts/create_written_parts.sql"))
    writer = PartWriter(conn, root)
    try:
        yield writer
        writer.sync()
    except BaseException:
        writer.discard()
        raise


def adopt(conn: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Create the bookkeeping; move conversation tables an older release kept in the file into
    parts, a part per (app, day), every row kept (one without a day or app in a part of its
    own), and replace them with their views; name the parts where they are now if the file and
    its parts were moved (before anything reads the views). Inside the caller's working copy."""
    conn.execute(sql_text("parts/create_manifest.sql"))
    tables = {name for (name,) in conn.execute(sql_text("warehouse/list_tables.sql")).fetchall()}
    if not any(spec.name in tables for spec in CONVERSATION_TABLES):  # kept as parts (all of them, or none)
        ((elsewhere,),) = conn.execute(sql_text("parts/views_elsewhere.sql"), {"root": str(root)}).fetchall()
        if elsewhere:
            install_views(conn, root)
        return
    with part_writer(conn, root) as writer:
        # conversations last: the others' partitions are found through it
        for spec in (*CONVERSATION_TABLES[1:], CONVERSATIONS):
            found = conn.execute(sql_text("parts/adopted_partitions.sql").format(table=spec.name)).fetchall()
            for app, day in found:
                writer.write("write_adopted_part", spec, app, day)
        for spec in CONVERSATION_TABLES[1:]:
            conn.execute(sql_text("warehouse/drop_table.sql").format(table=spec.name))
        conn.execute(sql_text("warehouse/drop_table.sql").format(table=CONVERSATIONS.name))
        writer.publish(next_version(conn))
    install_views(conn, root)
