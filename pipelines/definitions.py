"""The Dagster code location: `dagster dev` from the repository root loads this module."""

from __future__ import annotations

import dagster as dg

from pipelines.orchestration.conversation_assets import (
    CONVERSATION_ASSETS,
    ingest_conversations_job,
    rebuild_conversations_job,
)
from pipelines.orchestration.evaluation_assets import (
    EVALUATION_ASSETS,
    ingest_evaluation_runs_job,
    start_evaluation_job,
    started_evaluation_sensor,
    unfinished_evaluation_runs_sensor,
)
from pipelines.orchestration.report_assets import (
    REPORT_ASSETS,
    report_after_loads_sensor,
    report_dashboard_job,
)
from pipelines.orchestration.resources import resources_from_env
from pipelines.orchestration.schedules import SCHEDULES, SENSORS


def build_definitions() -> dg.Definitions:
    """Definitions bound to the current environment (`CES_*` variables)."""
    return dg.Definitions(
        assets=[*CONVERSATION_ASSETS, *EVALUATION_ASSETS, *REPORT_ASSETS],
        jobs=[
            ingest_conversations_job,
            rebuild_conversations_job,
            ingest_evaluation_runs_job,
            start_evaluation_job,
            report_dashboard_job,
        ],
        schedules=SCHEDULES,
        sensors=[
            unfinished_evaluation_runs_sensor,
            started_evaluation_sensor,
            *SENSORS,
            report_after_loads_sensor,
        ],
        resources=resources_from_env(),
    )


defs = build_definitions()
