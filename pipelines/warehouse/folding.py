"""Folding: an app's days older than the schedule reloads are rewritten into one part a week,
then one a month (`fold_unit`), so that the lists of parts, and what binding them costs every
query, grow with apps and months, not days. A load folds, in its own transaction, what its days
pushed past the cutoff and the folded parts its conversations moved out of (`fold`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date, timedelta

import duckdb

from pipelines.lake.paths import app_segment
from pipelines.sqlfiles import quoted, sql_text
from pipelines.transform.schemas import CONVERSATION_TABLES, TableSpec
from pipelines.warehouse.parts import FOLDED, TABLE_NAMES, PartWriter, choose_days, file_columns, is_folded

FOLD_AFTER_DAYS = 7
"""Days of an app older than its newest day by more than this are folded: the hourly schedule
reloads the last few days (`CES_LOOKBACK_DAYS`), which stay day parts."""
LOOSE_DAYS = 7
"""The day parts a folded unit keeps beside its folded part (days loaded again after it was
written) before the next load folds them all into one part again: a week's."""
FOLDING = "folding_days"
"""The table of the folded parts' days that a new folded part is written from."""


def fold_unit(day: date, newest: date) -> tuple[date, date] | None:
    """The days an app's `day` is folded with, once its newest day is `newest`: its whole month
    once the month ended more than `FOLD_AFTER_DAYS` before `newest`, else its seven days of the
    month (1-7, 8-14, 15-21, 22-28) once they did; None while it is recent. A partition is stored
    in a file of its own while the schedule may load it again, then in one file with its week,
    then with its month: a year of an app is read from about 12 files, not 365."""
    cutoff = newest - timedelta(days=FOLD_AFTER_DAYS)
    month_end = (day.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    if month_end < cutoff:
        return day.replace(day=1), month_end
    if day.day <= 28:
        start = day.replace(day=(day.day - 1) // 7 * 7 + 1)
        if start + timedelta(days=6) < cutoff:
            return start, start + timedelta(days=6)
    return None


def write_folded_part(
    writer: PartWriter, spec: TableSpec, app: str, listed: Sequence[tuple[date, str]]
) -> None:
    """Write one folded part of these days of `app`, each with the part it is listed in now (a
    day part, or a folded part, which may hold other days too), and list it for each day in
    their place; a day left with no rows (its conversations moved) is listed by none."""
    relative, path = writer.new_part(f"{spec.name}/{app_segment(app)}/{FOLDED}")
    day_files = [str(writer.root / file) for _, file in listed if not is_folded(file)]
    folded = [(str(writer.root / file), day) for day, file in listed if is_folded(file)]
    sources, values = [], {"app": app}
    if day_files:
        sources.append(sql_text("parts/day_parts.sql").format(columns="*", files="$day_files"))
        values["day_files"] = day_files
    if folded:
        choose_days(writer.conn, FOLDING, folded)
        source = sql_text("parts/chosen_folded_parts.sql")
        sources.append(source.format(columns="* EXCLUDE (filename)", files="$folded_files", chosen=FOLDING))
        values["folded_files"] = sorted({file for file, _ in folded})
    text = sql_text("parts/write_folded_part.sql").format(
        relation=spec.name,
        columns=file_columns(spec),
        sources="\nUNION ALL BY NAME\n".join(sources),
        target=quoted(str(path)),
    )
    writer.conn.execute(text, values)
    rows = dict(writer.conn.execute(sql_text("parts/folded_part_days.sql"), {"file": str(path)}).fetchall())
    if not rows:
        path.unlink()
    writer.record(
        spec.name, app, [(day, relative if rows.get(day) else None, rows.get(day, 0)) for day, _ in listed]
    )


def fold(
    conn: duckdb.DuckDBPyConnection,
    writer: PartWriter,
    apps: Iterable[str],
    version: int,
    stale: Iterable[tuple[str, str, date]] = (),
) -> None:
    """Fold these apps' days that `fold_unit` groups and that are in more than one part, and
    write again the folded parts of the `stale` (table, app, day): a load's conversations moved
    out of them. Listed by publication `version`, in the load's transaction."""
    listed = conn.execute(
        sql_text("parts/app_parts.sql"), {"apps": sorted(set(apps)), "relations": TABLE_NAMES}
    ).fetchall()
    groups = fold_groups(listed, set(stale))
    specs = {spec.name: spec for spec in CONVERSATION_TABLES}
    for relation, app, days in groups:
        write_folded_part(writer, specs[relation], app, days)
    if groups:
        writer.publish(version)
        conn.execute(sql_text("parts/drop_chosen_days.sql").format(chosen=FOLDING))


def fold_groups(
    listed: Iterable[tuple[str, str, date, str]], stale: set[tuple[str, str, date]]
) -> list[tuple[str, str, list[tuple[date, str]]]]:
    """(table, app, its days with their parts) of each folded part to write: the days of a
    `fold_unit` in day parts (more than one, or more than `LOOSE_DAYS` beside its folded part),
    in more than one folded part, or holding a stale day; with every day of a folded part they
    list. A few days of a folded unit loaded again stay day parts, the folded part's rows of
    those days hidden (`warehouse_hidden_days`): a late day costs that day, not its month."""
    by_table: dict[tuple[str, str], list[tuple[date, str]]] = defaultdict(list)
    newest: dict[str, date] = {}
    for relation, app, day, file in listed:
        by_table[relation, app].append((day, file))
        newest[app] = max(newest.get(app, day), day)
    groups = []
    for (relation, app), days in sorted(by_table.items()):
        for unit in _units(days, newest[app]):
            files = {file for _, file in unit}
            folded = sum(map(is_folded, files))
            crowded = len(files) - folded > (LOOSE_DAYS if folded else 1)
            if folded > 1 or crowded or any((relation, app, day) in stale for day, _ in unit):
                groups.append((relation, app, unit))
    return groups


def _units(days: Iterable[tuple[date, str]], newest: date) -> list[list[tuple[date, str]]]:
    """One table's days of one app (with their parts) by `fold_unit` (a recent day alone), the
    units a folded part lists joined into one."""
    joined: dict[date, date] = {}  # a unit (its first day) → the unit it joined

    def unit_of(key: date) -> date:
        while joined.get(key, key) != key:
            key = joined[key]
        return key

    first_unit: dict[str, date] = {}
    keyed = []
    for day, file in sorted(days):
        unit = fold_unit(day, newest)
        key = unit_of(unit[0] if unit else day)
        if is_folded(file):
            earlier = unit_of(first_unit.setdefault(file, key))
            if earlier != key:
                joined[key] = earlier
        keyed.append((key, day, file))
    units: dict[date, list[tuple[date, str]]] = defaultdict(list)
    for key, day, file in keyed:
        units[unit_of(key)].append((day, file))
    return list(units.values())
