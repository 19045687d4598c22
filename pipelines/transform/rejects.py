"""Rejected objects: what a flattener records of one (its source, name, reason and JSON), and
their rows of the `rejects` table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import orjson
import pyarrow as pa

from pipelines.protojson import deepjson
from pipelines.resource_names import name_of
from pipelines.transform.schemas import REJECTS


@dataclass(frozen=True)
class Reject:
    source: str
    resource_name: str | None
    reason: str
    raw: Any

    @classmethod
    def of(cls, source: str, obj: Any, reason: str) -> Reject:
        """The reject of `obj` (parsed JSON), named by its `name` when that is a string."""
        return cls(source, name_of(obj), reason, obj)


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
