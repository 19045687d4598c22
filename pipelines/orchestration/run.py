"""Running the ingest job for a list of days through Dagster, as the CLI does.

Runs go through the Dagster instance in `DAGSTER_HOME`, so every CLI ingest shows up in the
Dagster UI with its materializations, row counts and logs, exactly like a scheduled run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import dagster as dg

from pipelines.orchestration.partitions import CES_API_POOL

DEFAULT_CES_API_CONCURRENCY = 4
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass
class PartitionOutcome:
    """How one day's run ended: its run id, success, the first error and its metadata."""

    day: date
    run_id: str
    success: bool
    error: str | None = None
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)

    def value(self, asset: str, key: str, default: Any = 0) -> Any:
        return self.metadata.get(asset, {}).get(key, default)


def ensure_dagster_home() -> Path:
    """Point `DAGSTER_HOME` at `./dagster_home` when unset (Dagster needs an absolute path)."""
    home = Path(os.environ.get("DAGSTER_HOME") or "dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def instance_with_pools() -> dg.DagsterInstance:
    """The instance in `DAGSTER_HOME`, with the CES API pool limit applied."""
    ensure_dagster_home()
    instance = dg.DagsterInstance.get()
    limit = int(os.environ.get("CES_API_CONCURRENCY") or DEFAULT_CES_API_CONCURRENCY)
    instance.event_log_storage.set_concurrency_slots(CES_API_POOL, limit)
    return instance


def run_job_for_days(
    definitions: dg.Definitions,
    job_name: str,
    days: Sequence[date],
    *,
    instance: dg.DagsterInstance,
    on_outcome: Callable[[PartitionOutcome], None] | None = None,
) -> list[PartitionOutcome]:
    """Run `job_name` once per day (partition); a failed day does not stop the others."""
    job = definitions.resolve_job_def(job_name)
    outcomes = []
    for day in days:
        result = job.execute_in_process(
            partition_key=day.isoformat(), instance=instance, raise_on_error=False, run_config=QUIET_LOGS
        )
        outcome = PartitionOutcome(
            day, result.run_id, result.success, _first_error(result), _metadata(result)
        )
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)
    return outcomes


def run_job(
    definitions: dg.Definitions,
    job_name: str,
    *,
    instance: dg.DagsterInstance,
    run_config: dict[str, Any] | None = None,
) -> PartitionOutcome:
    """Run an unpartitioned job once; the outcome's `day` is today (UTC)."""
    job = definitions.resolve_job_def(job_name)
    config = {**QUIET_LOGS, **(run_config or {})}
    result = job.execute_in_process(instance=instance, raise_on_error=False, run_config=config)
    today = datetime.now(UTC).date()
    return PartitionOutcome(today, result.run_id, result.success, _first_error(result), _metadata(result))


def _first_error(result: dg.ExecuteInProcessResult) -> str | None:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data and event.step_failure_data.error:
            error = event.step_failure_data.error
            while error.cause is not None and error.message.startswith("Error occurred while executing"):
                error = error.cause
            return f"{event.step_key}: {error.message.strip()}"
    return None if result.success else "run failed"


def _metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        found[materialization.asset_key.to_user_string()] = {
            key: getattr(value, "value", value) for key, value in materialization.metadata.items()
        }
    return found
