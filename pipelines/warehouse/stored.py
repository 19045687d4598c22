"""What loads, sensors and the command line read back from the warehouse between loads: the
evaluation runs and operations stored final, the runs to follow, row counts. Read-only, and
nothing before the first load; apart from `loads`, which writes."""

from __future__ import annotations

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


def stored_final(warehouse: Warehouse, app: str) -> dict[str, set[str]]:
    """Names of `app`'s evaluation runs stored in a final state and of its run operations stored as
    done, as `fetch_evaluation_runs` takes them (it asks CES for neither again): none before a load."""
    runs = _stored(warehouse, EVALUATION_RUNS.name, "finished_evaluation_runs", {"app": app})
    operations = _stored(warehouse, EVALUATION_RUN_OPERATIONS.name, "finished_operations", {"app": app})
    return {
        "finished_runs": {name for (name,) in runs},
        "finished_operations": {name for (name,) in operations},
    }


def unfinished_evaluation_runs(warehouse: Warehouse) -> list[tuple[str, str]]:
    """(app, run name) of each run not COMPLETED, ERROR or CANCELLED, and not gone from CES."""
    gone = {"source": RUN_REJECT_SOURCE, "refused": REFUSED_RUN}
    return _stored(warehouse, EVALUATION_RUNS.name, "unfinished_evaluation_runs", gone)


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
