"""The official MCP Python SDK client talks to the simulator in both eras, over JSON and SSE framing."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator

SCALE = SimulatorScale(apps=1, days=1, conversations_per_day=12, evaluation_runs_per_app=3)


async def _session(url: str, app: str, mode: str) -> tuple[str, dict, dict, set[str]]:
    async with Client(url, mode=mode) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        listed = await client.call_tool("list_conversations", {"parent": app, "pageSize": 3})
        run_name = (await client.call_tool("list_evaluation_runs", {"parent": app})).structured_content[
            "evaluationRuns"
        ][0]["name"]
        run = await client.call_tool("get_evaluation_run", {"name": run_name})
        assert not listed.is_error and not run.is_error
        return client.protocol_version, listed.structured_content, run.structured_content, tools


@pytest.mark.parametrize(
    ("mode", "response_mode", "require_session", "negotiated"),
    [
        ("legacy", "mixed", False, "2025-11-25"),
        ("legacy", "sse", True, "2025-11-25"),
        ("2026-07-28", "mixed", False, "2026-07-28"),
        ("auto", "sse", False, "2026-07-28"),
        ("auto", "json", True, "2025-11-25"),  # the discover probe is refused; the client falls back
    ],
)
def test_sdk_client(mode: str, response_mode: str, require_session: bool, negotiated: str) -> None:
    config = SimulatorConfig(scale=SCALE, response_mode=response_mode, require_session=require_session)
    with running_simulator(config) as handle:
        version, listed, run, tools = anyio.run(_session, handle.url, handle.apps[0], mode)
    assert version == negotiated
    assert len(listed["conversations"]) == 3 and listed["nextPageToken"]
    assert run["name"].startswith(handle.apps[0] + "/evaluationRuns/") and run["state"]
    assert {"list_conversations", "get_evaluation_run", "run_evaluation", "get_operation"} <= tools
