"""The raw lake's record: one tool call per JSON line, only what the server said (rebuilds replay it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipelines.ces.errors import CesDataError


@dataclass(slots=True)
class ApiRecord:
    tool: str
    arguments: dict[str, Any]
    result: Any = field(repr=False)
    fetched_at: str = ""
    refused: str | None = None
    """The server's words when it refused the call and the caller kept the refusal (a tool or
    JSON-RPC error, e.g. NOT_FOUND of a deleted object); `result` is then empty."""

    def to_dict(self) -> dict[str, Any]:
        record = {
            "tool": self.tool,
            "arguments": self.arguments,
            "result": self.result,
            "fetched_at": self.fetched_at,
        }
        return record if self.refused is None else record | {"refused": self.refused}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApiRecord:
        """A record read back from the lake; a malformed one is a CesDataError naming what is wrong."""
        tool, arguments, result, fetched_at = (
            data.get(k) for k in ("tool", "arguments", "result", "fetched_at")
        )
        if not isinstance(tool, str) or not isinstance(arguments, dict) or not isinstance(result, dict):
            raise CesDataError(f"not an API record (tool, arguments, result): {str(data)[:200]}")
        refused = data.get("refused")
        return cls(
            tool,
            arguments,
            result,
            fetched_at if isinstance(fetched_at, str) else "",
            refused if isinstance(refused, str) else None,
        )


def as_record(item: ApiRecord | Mapping[str, Any]) -> ApiRecord:
    return item if isinstance(item, ApiRecord) else ApiRecord.from_dict(item)
