"""Rejected objects as rows of the `rejects` table."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import orjson
import pyarrow as pa

from pipelines.protojson import deepjson
from pipelines.transform.rows import Reject
from pipelines.transform.schemas import REJECTS


def _raw_json(raw: object) -> str | None:
    """The object as JSON, at any depth; NULL only for what JSON cannot hold (the raw lake has it)."""
    try:
        return deepjson.dumps(raw).decode()
    except (orjson.JSONEncodeError, TypeError):
        return None


def rejects_batch(rejects: Sequence[Reject], app: str, day: date) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "app": [app] * len(rejects),
            "partition_date": [day] * len(rejects),
            "source": [r.source for r in rejects],
            "resource_name": [r.resource_name for r in rejects],
            "reason": [r.reason for r in rejects],
            "raw_json": [_raw_json(r.raw) for r in rejects],
        },
        schema=REJECTS.schema,
    )
