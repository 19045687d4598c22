"""A DuckDB-file warehouse keeps its conversation tables as Parquet parts beside the file: a load
writes only its own partitions' parts, a reader keeps reading the parts of the file it opened
until it closes it, and parts no reader can read any more are deleted."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest
from conversation_samples import APP, full_conversation
from test_warehouse import DAY, NEXT_DAY, OTHER_APP, write_partition

from pipelines.ingest.load import load_conversation_partitions
from pipelines.lake.paths import app_segment
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES
from pipelines.warehouse import folding, garbage, parts, publish
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.publish import WarehouseFileError


def part_files(warehouse: Warehouse) -> set[Path]:
    return {path for path in warehouse.parts_root.rglob("*.parquet")}


def listed(warehouse: Warehouse) -> set[Path]:
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        return {
            warehouse.parts_root / file
            for (file,) in conn.execute("SELECT file FROM warehouse_parts").fetchall()
        }


def conversation(conversation_id: str, start: str, **changes: object) -> dict:
    return dict(full_conversation(conversation_id, start=start), **changes)


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    lake = Lake(str(tmp_path / "lake"))
    write_partition(lake, APP, DAY, [conversation("a", "2026-11-01T10:00:00Z")])
    write_partition(lake, APP, NEXT_DAY, [conversation("b", "2026-11-02T10:00:00Z")])
    other = conversation("o", "2026-11-01T12:00:00Z", name=f"{OTHER_APP}/conversations/o")
    write_partition(lake, OTHER_APP, DAY, [other])
    return lake


EVERYTHING = [(APP, DAY), (APP, NEXT_DAY), (OTHER_APP, DAY)]
APP_SEGMENT = app_segment(APP)


def test_the_conversation_tables_are_views_of_one_part_per_table_and_partition(
    lake: Lake, tmp_path: Path
) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, EVERYTHING)
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        kinds = dict(conn.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
        per_partition = dict(
            conn.execute("SELECT relation, count(*) FROM warehouse_parts GROUP BY relation").fetchall()
        )
        days = conn.execute(
            "SELECT app, partition_date, count(*) FROM spans JOIN conversations USING (conversation_name, "
            "partition_date) GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert {spec.name: kinds[spec.name] for spec in CONVERSATION_TABLES} == {
        spec.name: "VIEW" for spec in CONVERSATION_TABLES
    }
    assert kinds["rejects"] == "BASE TABLE" and kinds["daily_conversations"] == "VIEW"
    # every table has its own part for each of the 3 partitions, a rollup one per app and month
    assert {name: per_partition[name] for name in parts.TABLE_NAMES} == dict.fromkeys(parts.TABLE_NAMES, 3)
    assert per_partition["daily_conversations"] == 2
    assert [(app, day) for app, day, _ in days] == sorted([(OTHER_APP, DAY), (APP, DAY), (APP, NEXT_DAY)])
    assert part_files(warehouse) == listed(warehouse)


def test_a_load_writes_its_own_partitions_parts_and_no_other(lake: Lake, tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, EVERYTHING)
    before = listed(warehouse)
    write_partition(lake, APP, NEXT_DAY, [conversation("b", "2026-11-02T10:00:00Z", source="EVAL")])
    load_conversation_partitions(lake, warehouse, [(APP, NEXT_DAY)])
    after = listed(warehouse)
    new = {
        path
        for path in after - before
        if path.relative_to(warehouse.parts_root).parts[0] in parts.TABLE_NAMES
    }
    assert len(new) == len(CONVERSATION_TABLES)
    assert all(f"partition_date={NEXT_DAY.isoformat()}" in str(path) for path in new)
    # and the rollups: the part of the app's month, none of the other app's
    rollups = {path.relative_to(warehouse.parts_root) for path in after - before} - {
        path.relative_to(warehouse.parts_root) for path in new
    }
    assert {path.parts[0] for path in rollups} >= {"daily_conversations", "daily_span_latency"}
    assert {path.parts[1:3] for path in rollups} == {(APP_SEGMENT, f"partition_date={DAY.replace(day=1)}")}
    assert len(before - after) == len(new) + len(rollups)
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        assert conn.execute(
            "SELECT source FROM conversations WHERE partition_date = ?", [NEXT_DAY]
        ).fetchall() == [("EVAL",)]


def test_a_warehouse_moved_with_its_parts_loads_and_then_names_them_where_they_are(
    lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the documentation says to move it: the file and its parts folder together, then a load
    (of a newer release, which makes the views again), which must not read the views naming the
    old folder before it names the new one."""
    from pipelines.warehouse import catalog, loads

    old = Warehouse(str(tmp_path / "old" / "w.duckdb"))
    load_conversation_partitions(lake, old, EVERYTHING)
    moved = Warehouse(str(tmp_path / "new" / "w.duckdb"))
    (tmp_path / "old").rename(tmp_path / "new")
    with pytest.raises(WarehouseFileError) as refused, moved.connect(read_only=True) as conn:
        conn.execute("SELECT count(*) FROM spans").fetchall()  # before a load names the new folder
    said = str(refused.value)
    assert said.startswith(
        f"{moved.path} names a Parquet part that is not there ({tmp_path}/old/w.duckdb.parts/"
    )
    assert "load any one day to name the parts where they are now" in said
    monkeypatch.setattr(loads, "_SCHEMA_ENSURED", set())  # a new process, as the next command is
    monkeypatch.setattr(catalog, "definition", lambda view_columns: "a newer release")
    load_conversation_partitions(lake, moved, [(APP, NEXT_DAY)])
    with duckdb.connect(moved.path, read_only=True) as conn:
        spans = conn.execute(
            "SELECT partition_date, count(*) FROM spans GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        views = conn.execute("SELECT sql FROM duckdb_views() WHERE schema_name = 'parts'").fetchall()
    assert [day for day, _ in spans] == [DAY, NEXT_DAY] and all(count > 0 for _, count in spans)
    assert all("/old/" not in sql for (sql,) in views)
    assert sum(str(moved.parts_root) in sql for (sql,) in views) >= len(CONVERSATION_TABLES) + 1


def test_a_moved_conversation_leaves_the_part_of_the_day_it_left(lake: Lake, tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, EVERYTHING)
    moved = conversation("a", "2026-11-02T00:30:00Z")  # its start is now on the next day
    write_partition(lake, APP, NEXT_DAY, [conversation("b", "2026-11-02T10:00:00Z"), moved])
    load_conversation_partitions(lake, warehouse, [(APP, NEXT_DAY)])  # the day it left: not reloaded
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        where = conn.execute(
            "SELECT conversation_name, partition_date, count(*) FROM turns GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        parts_of_day_left = conn.execute(
            "SELECT count(*) FROM warehouse_parts "
            "WHERE app = ? AND partition_date = ? AND list_contains(?, relation)",
            [APP, DAY, parts.TABLE_NAMES],
        ).fetchone()
    assert sorted((name.rsplit("/", 1)[1], day) for name, day, _ in where) == [
        ("a", NEXT_DAY),
        ("b", NEXT_DAY),
        ("o", DAY),
    ]
    assert parts_of_day_left == (0,)  # its only conversation left: the day has no part any more


READER = """
import sys, duckdb
conn = duckdb.connect(sys.argv[1], read_only=True)
COUNTS = "SELECT (SELECT count(*) FROM turns), (SELECT sum(turns) FROM daily_conversations)"
print(*conn.execute(COUNTS).fetchone(), flush=True)
sys.stdin.readline()  # held open until told
print(*conn.execute(COUNTS).fetchone(), flush=True)
"""
"""A reader of the turns and of the rollup that counts them, before and after the loads."""


def test_a_reader_keeps_reading_its_parts_which_go_once_no_reader_holds_them(
    lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(garbage, "GRACE_SECONDS", 0.0)
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, EVERYTHING)
    first = listed(warehouse)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, warehouse.path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    same_process = duckdb.connect(warehouse.path, read_only=True)  # this process's own reader
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "6 6"
        shorter = conversation("a", "2026-11-01T10:00:00Z", turnCount=1)
        shorter["turns"] = shorter["turns"][:1]
        write_partition(lake, APP, DAY, [shorter])
        load_conversation_partitions(lake, warehouse, [(APP, DAY)])
        load_conversation_partitions(lake, warehouse, [(APP, DAY)])  # collects: nothing, both readers hold
        assert first <= part_files(warehouse)
        assert same_process.execute("SELECT count(*) FROM turns").fetchone() == (6,)
        same_process.close()
        load_conversation_partitions(lake, warehouse, [(APP, DAY)])
        assert first <= part_files(warehouse)  # the other process still holds the first file
        assert reader.stdin is not None
        reader.stdin.write("\n")
        reader.stdin.flush()
        # the state it opened, the rollups' as the tables', every part of it there
        assert reader.stdout.readline().strip() == "6 6"
    finally:
        same_process.close()
        reader.kill() if reader.poll() is None else None
        reader.wait(timeout=30)
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    current = listed(warehouse)
    assert not (first - current) & part_files(warehouse)  # the replaced parts went with their readers
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM turns").fetchone() == (1 + 2 + 2,)
        assert conn.execute("SELECT sum(turns) FROM daily_conversations").fetchone() == (1 + 2 + 2,)
        retired = {
            warehouse.parts_root / f
            for (f,) in conn.execute("SELECT file FROM warehouse_retired_parts").fetchall()
        }
    assert part_files(warehouse) == current | retired
    # what the last load replaced, kept for a minute's readers: that partition's parts only (and
    # its app's month of rollups, listed under the month's first day: the same here)
    assert retired and all(f"partition_date={DAY.isoformat()}" in str(path) for path in retired)
    versions = sorted((warehouse.parts_root / publish.VERSIONS).glob("*.duckdb"))
    assert len(versions) <= 2  # the current file, and the one it replaced


def _table_views(warehouse: Warehouse) -> dict[str, tuple[str, str | None]]:
    """Each conversation table's own view: its definition and its first column's description."""
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        found = conn.execute(
            "SELECT v.view_name, v.sql, c.comment FROM duckdb_views() AS v JOIN duckdb_columns() AS c "
            "ON c.schema_name = v.schema_name AND c.table_name = v.view_name AND c.column_index = 1 "
            "WHERE v.schema_name = 'main'"
        ).fetchall()
    names = {spec.name for spec in CONVERSATION_TABLES}
    return {name: (text, comment) for name, text, comment in found if name in names}


def _parts_views(warehouse: Warehouse) -> dict[str, tuple[str, str]]:
    """Each view of the parts schema: its definition and the comment it was made from."""
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        found = conn.execute(
            "SELECT view_name, sql, comment FROM duckdb_views() WHERE schema_name = 'parts'"
        ).fetchall()
    return {name: (text, comment) for name, text, comment in found}


def test_a_load_replaces_the_lists_of_parts_and_leaves_the_tables_views_and_descriptions(
    lake: Lake, tmp_path: Path
) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    first, first_parts = _table_views(warehouse), _parts_views(warehouse)
    load_conversation_partitions(lake, warehouse, EVERYTHING)
    assert _table_views(warehouse) == first
    for name, (text, comment) in first.items():
        assert f"FROM parts.{name}" in text and "read_parquet" not in text, text
        assert comment, name  # described once, kept by every load since
    # the views of the parts stay as they were made (a load binds none): each reads its list
    assert _parts_views(warehouse) == first_parts
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        ids = {Path(file).stem for (file,) in conn.execute("SELECT file FROM warehouse_parts").fetchall()}
    assert len(ids) > 10 and all(
        f"parts.{name}_files()" in text and not any(id_ in text for id_ in ids)  # no part named in it
        for name, (text, _) in first_parts.items()
        if name in parts.TABLE_NAMES or "CAST(NULL AS" not in text  # a rollup with no row has no part
    )
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        (listed,) = conn.execute(
            "SELECT macro_definition FROM duckdb_functions() "
            "WHERE schema_name = 'parts' AND function_name = 'spans_files'"
        ).fetchone()
        count = conn.execute("SELECT count(DISTINCT partition_date) FROM spans").fetchone()
    # three parts, each named without its folder, day key or suffix: `<app>/=<day>/<12 hex digits>`
    assert re.fullmatch(r"'[^/,]+/=2026-11-0\d/[0-9a-f]{12}(,[^/,]+/=2026-11-0\d/[0-9a-f]{12}){2}'", listed)
    assert count == (2,)


def test_a_table_view_of_an_older_release_listing_its_parts_itself_is_made_again(
    lake: Lake, tmp_path: Path
) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(lake, warehouse, [(APP, DAY)])
    with duckdb.connect(warehouse.path) as conn:  # the view as an older release wrote it
        (listing,) = conn.execute(
            "SELECT sql FROM duckdb_views() WHERE schema_name = 'parts' AND view_name = 'turns'"
        ).fetchone()
        conn.execute("DROP VIEW turns")
        conn.execute(listing.replace("VIEW parts.turns AS", "VIEW turns AS"))
    load_conversation_partitions(lake, warehouse, EVERYTHING)
    text, comment = _table_views(warehouse)["turns"]
    assert "FROM parts.turns" in text and comment
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        assert conn.execute("SELECT count(DISTINCT partition_date) FROM turns").fetchone() == (2,)


# -- folded parts -------------------------------------------------------------------------------

FIRST = date(2026, 10, 20)
DAYS = [FIRST + timedelta(days=offset) for offset in range(28)]  # 2026-10-20 … 2026-11-16


def _day_conversation(day: date, name: str = "c", **changes: object) -> dict:
    return conversation(f"{name}{day:%m%d}", f"{day.isoformat()}T10:00:00Z", **changes)


@pytest.fixture
def month_lake(tmp_path: Path) -> Lake:
    """One conversation a day of APP over 28 days: a month that ended, a week of the next month
    that ended more than a week before the newest day, and the recent days."""
    lake = Lake(str(tmp_path / "lake"))
    for day in DAYS:
        write_partition(lake, APP, day, [_day_conversation(day)])
    return lake


def _listing(warehouse: Warehouse, relation: str = "conversations") -> dict[date, str]:
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        return dict(
            conn.execute(
                "SELECT partition_date, file FROM warehouse_parts WHERE relation = ? ORDER BY ALL", [relation]
            ).fetchall()
        )


def _per_day(warehouse: Warehouse, table: str = "conversations") -> dict[date, int]:
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        return dict(conn.execute(f"SELECT partition_date, count(*) FROM {table} GROUP BY ALL").fetchall())


@pytest.mark.parametrize(
    ("day", "newest", "unit"),
    [
        (date(2026, 10, 20), date(2026, 11, 16), (date(2026, 10, 1), date(2026, 10, 31))),
        (date(2026, 11, 3), date(2026, 11, 16), (date(2026, 11, 1), date(2026, 11, 7))),
        (date(2026, 11, 8), date(2026, 11, 16), None),  # its week ends 11-14, within 7 days of 11-16
        (date(2026, 11, 16), date(2026, 11, 16), None),
        (date(2026, 11, 29), date(2026, 12, 10), (date(2026, 11, 1), date(2026, 11, 30))),
        (date(2026, 10, 30), date(2026, 11, 7), None),  # the 29th-31st wait for their month
        (date(2024, 2, 29), date(2024, 3, 9), (date(2024, 2, 1), date(2024, 2, 29))),
    ],
)
def test_an_old_day_is_folded_with_its_week_then_with_its_month(
    day: date, newest: date, unit: tuple[date, date] | None
) -> None:
    assert folding.fold_unit(day, newest) == unit


def test_a_load_folds_the_days_a_week_older_than_the_newest_into_one_part_a_week_or_a_month(
    month_lake: Lake, tmp_path: Path
) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    for start in range(0, len(DAYS), 5):  # as hourly runs bring them, a few days at a time
        load_conversation_partitions(month_lake, warehouse, [(APP, day) for day in DAYS[start : start + 5]])
    for spec in CONVERSATION_TABLES:
        listing = _listing(warehouse, spec.name)
        october = {listing[day] for day in DAYS if day.month == 10}
        first_week = {listing[day] for day in DAYS if day.month == 11 and day.day <= 7}
        recent = [listing[day] for day in DAYS if day.month == 11 and day.day > 7]
        assert len(october) == 1 and parts.is_folded(october.pop()), spec.name
        assert len(first_week) == 1 and parts.is_folded(first_week.pop()), spec.name
        assert len(set(recent)) == 9 and not any(parts.is_folded(file) for file in recent), spec.name
    assert _per_day(warehouse) == dict.fromkeys(DAYS, 1)
    assert _per_day(warehouse, "turns") == dict.fromkeys(DAYS, 2)
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        held = {Path(f) for (f,) in conn.execute("SELECT file FROM warehouse_retired_parts").fetchall()}
        one_day = conn.execute(
            "SELECT conversation_name FROM conversations WHERE partition_date = ?", [date(2026, 10, 25)]
        ).fetchall()
    assert one_day == [(f"{APP}/conversations/c1025",)]
    listed_now = listed(warehouse)
    assert listed_now <= part_files(warehouse) <= listed_now | {warehouse.parts_root / f for f in held}


def test_a_day_loaded_again_in_a_folded_part_is_a_day_part_and_its_folded_rows_are_hidden(
    month_lake: Lake, tmp_path: Path
) -> None:
    """A late day of a folded month costs that day: it becomes a day part, the month's part stays
    listed for its other days and its rows of that day are no longer read. More than
    `LOOSE_DAYS` days loaded again fold the month into one part again, nothing hidden."""
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(month_lake, warehouse, [(APP, day) for day in DAYS])
    again = date(2026, 10, 25)
    folded = _listing(warehouse)[again]
    write_partition(
        month_lake, APP, again, [_day_conversation(again, source="EVAL"), _day_conversation(again, "d")]
    )
    load_conversation_partitions(month_lake, warehouse, [(APP, again)])
    listing = _listing(warehouse)
    assert not parts.is_folded(listing[again])
    assert {listing[day] for day in DAYS if day.month == 10 and day != again} == {folded}  # not written again
    assert _per_day(warehouse) == {**dict.fromkeys(DAYS, 1), again: 2}
    for table in ("spans", "turns"):  # every table's rows of the day: the day part's alone
        assert _per_day(warehouse, table)[again] == 2 * _per_day(warehouse, table)[DAYS[0]], table
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        assert conn.execute(
            "SELECT conversation_name, source FROM conversations WHERE partition_date = ? ORDER BY ALL",
            [again],
        ).fetchall() == [(f"{APP}/conversations/c1025", "EVAL"), (f"{APP}/conversations/d1025", "LIVE")]
        daily = conn.execute(
            "SELECT sum(conversations) FROM daily_conversations WHERE day = ?", [again]
        ).fetchall()
        hidden = conn.execute("SELECT count(*) FROM warehouse_hidden_days").fetchone()
    assert daily == [(2,)]  # the day's rollups, from its new rows
    assert hidden == (len(parts.TABLE_NAMES),)  # each table's rows of the day in October's part
    with duckdb.connect() as bi:  # a BI tool that attaches the file under a name of its own
        bi.execute(f"ATTACH '{warehouse.path}' AS bi (READ_ONLY)")
        on_the_day = "SELECT count(*) FROM bi.conversations WHERE partition_date = ?"
        assert bi.execute(on_the_day, [again]).fetchone() == (2,)

    october = [day for day in DAYS if day.month == 10]
    for day in october:
        write_partition(month_lake, APP, day, [_day_conversation(day), _day_conversation(day, "e")])
    load_conversation_partitions(month_lake, warehouse, [(APP, day) for day in october])
    listing = _listing(warehouse)
    assert len({listing[day] for day in october}) == 1 and parts.is_folded(listing[october[0]])
    assert _per_day(warehouse) == {day: 2 if day.month == 10 else 1 for day in DAYS}
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM warehouse_hidden_days").fetchone() == (0,)


def test_a_conversation_moved_out_of_a_folded_day_leaves_it(month_lake: Lake, tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(month_lake, warehouse, [(APP, day) for day in DAYS])
    left, newest = date(2026, 10, 22), DAYS[-1]
    moved = conversation("c1022", f"{newest.isoformat()}T12:00:00Z")  # it starts on the newest day now
    write_partition(month_lake, APP, newest, [_day_conversation(newest), moved])
    load_conversation_partitions(month_lake, warehouse, [(APP, newest)])
    assert _per_day(warehouse) == {**{day: 1 for day in DAYS if day != left}, newest: 2}
    assert left not in _listing(warehouse)  # its only conversation left: the day has no part
    assert len({file for day, file in _listing(warehouse).items() if day.month == 10}) == 1


def test_a_view_of_a_few_partitions_reads_only_their_days_of_a_folded_part(
    month_lake: Lake, tmp_path: Path
) -> None:
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    load_conversation_partitions(month_lake, warehouse, [(APP, day) for day in DAYS])
    chosen = [(APP, date(2026, 10, 21)), (APP, date(2026, 11, 3)), (APP, date(2026, 11, 12))]
    with duckdb.connect(warehouse.path, read_only=True) as conn:
        with parts.reading_only(conn, warehouse.parts_root, chosen):
            days = conn.execute("SELECT partition_date FROM turns GROUP BY ALL ORDER BY ALL").fetchall()
            count = conn.execute("SELECT count(*) FROM conversations").fetchone()
        assert conn.execute("SELECT count(*) FROM conversations").fetchone() == (len(DAYS),)
    assert [day for (day,) in days] == [day for _, day in chosen] and count == (3,)


def test_a_folded_unit_is_written_again_whole_once_more_than_loose_days_of_it_were_loaded_again() -> None:
    """Days of a folded month loaded again stay day parts beside it up to `LOOSE_DAYS`; one more,
    and the whole month is written again as one part. A month folded when its app's newest day was
    later, a day of it loaded again while the newest day is earlier (its newer days emptied): the
    month's part stays one unit, not split into weeks to write again."""
    june = [date(2026, 6, day) for day in range(1, 31)]

    def listing(again: list[date], newest: date) -> list[tuple[str, str, date, str]]:
        listed = [("spans", APP, day, "spans/a/folded/month.parquet") for day in june if day not in again]
        listed += [("spans", APP, day, f"spans/a/partition_date={day}/p.parquet") for day in again]
        return [*listed, ("spans", APP, newest, f"spans/a/partition_date={newest}/q.parquet")]

    mid_july = date(2026, 7, 15)
    loose = june[9 : 9 + folding.LOOSE_DAYS]
    assert folding.fold_groups(listing(loose, mid_july), set()) == []
    groups = folding.fold_groups(listing([*loose, june[20]], mid_july), set())
    assert [(relation, app, [day for day, _ in days]) for relation, app, days in groups] == [
        ("spans", APP, june)
    ]
    assert folding.fold_groups(listing([june[14]], date(2026, 7, 1)), set()) == []
    assert folding.fold_groups(listing([], date(2026, 7, 1)), set()) == []  # one part a unit
