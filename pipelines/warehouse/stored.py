"""What loads, sensors and the command line read back from the warehouse between loads: the
evaluation runs and operations stored final, the runs to follow, row counts. Read-only, and
nothing before the first load; apart from `loads`, which writes."""

from __future__ import annotations

from typing import Any

from pipelines.sqlfiles import sql_text
from pipelines.transform.schemas import (
    ALL_TABLES,
    EVALUATION_RUN_OPERATIONS,
    EVALUATION_RUNS,
    REFUSED_RUN,
    RUN_REJECT_SOURCE,
)
from pipelines.warehouse import ducklake
from pipelines.warehouse.duck import Warehouse, relations, tables


def stored_runs(warehouse: Warehouse, app: str) -> dict[str, Any]:
    """What the warehouse holds of `app`'s evaluation runs, as `fetch_evaluation_runs` takes it, so
    that a fetch asks CES for what can have changed alone: the runs stored in a final state and
    the run operations stored as done (neither asked for again), the runs still unfinished (asked
    for by name), and when the newest run was created (the listing stops short of older ones).
    One connection; nothing before a load."""
    if not warehouse.exists():
        return {}
    with warehouse.connect(read_only=True) as conn:
        existing = tables(conn)
        if EVALUATION_RUNS.name not in existing:
            return {}

        def read(statement: str, params: dict[str, str]) -> list[tuple]:
            return conn.execute(sql_text(f"warehouse/{statement}.sql"), params).fetchall()

        unfinished = read("unfinished_evaluation_runs", _GONE)
        ((newest,),) = read("newest_evaluation_run", {"app": app})
        return {
            "finished_runs": {name for (name,) in read("finished_evaluation_runs", {"app": app})},
            "finished_operations": (
                {name for (name,) in read("finished_operations", {"app": app})}
                if EVALUATION_RUN_OPERATIONS.name in existing  # not in a file of an older release
                else set()
            ),
            "unfinished_runs": [name for run_app, name in unfinished if run_app == app],
            "newest_created": newest,
        }


_GONE = {"source": RUN_REJECT_SOURCE, "refused": REFUSED_RUN}
"""How a run CES said is gone is recorded: a reject of this source whose reason starts so."""


def unfinished_evaluation_runs(warehouse: Warehouse) -> list[tuple[str, str]]:
    """(app, run name) of each run not COMPLETED, ERROR or CANCELLED, and not gone from CES."""
    return _stored(warehouse, EVALUATION_RUNS.name, "unfinished_evaluation_runs", _GONE)


def evaluations_run_before(warehouse: Warehouse, app: str) -> dict[str, list[str]]:
    """The ids of the evaluations (`--evaluations`) and datasets (`--dataset`) that `app`'s loaded
    runs covered, by option."""
    found: dict[str, list[str]] = {}
    for option, name in _stored(warehouse, EVALUATION_RUNS.name, "app_evaluations", {"app": app}):
        found.setdefault(option, []).append(name)
    return found


def _stored(warehouse: Warehouse, table: str, statement: str, params: object = None) -> list[tuple]:
    """The rows of `sql/warehouse/STATEMENT.sql`, read-only; none before `table` is created."""
    if not warehouse.exists():
        return []
    with warehouse.connect(read_only=True) as conn:
        if table not in tables(conn):
            return []
        return conn.execute(sql_text(f"warehouse/{statement}.sql"), params).fetchall()


def row_counts(warehouse: Warehouse) -> dict[str, int]:
    """Rows per contract table (0 for a table not created yet)."""
    none = {spec.name: 0 for spec in ALL_TABLES}
    if not warehouse.exists():
        return none
    try:
        with warehouse.connect(read_only=True) as conn:
            existing = relations(conn)
            count_sql = sql_text("warehouse/count_rows.sql")
            return {
                name: conn.execute(count_sql.format(table=name)).fetchone()[0] if name in existing else 0
                for name in none
            }
    except ducklake.DuckLakeMissingError:
        return none
