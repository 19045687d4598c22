"""End to end: the client and the tool layer ingest a small simulator scale completely.

The expected conversations come from the simulator's own corpus module, so this checks that
paging, short and empty pages, hydration of summaries, both response framings, text-only
results, session fallback and authentication together lose and duplicate nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from client_fixtures import fast_limiter

from pipelines.ces.client import CesMcpClient
from pipelines.ces.simulator.corpus import ConversationKey, SimulatorScale, conversation, conversation_header
from pipelines.ces.simulator.runner import running_simulator
from pipelines.ces.simulator.server import SimulatorConfig
from pipelines.ces.tools import (
    Listing,
    iter_conversation_records,
    iter_evaluation_run_records,
    resolve_conversations,
)
from pipelines.ces.window import TimeWindow
from pipelines.config import CesSettings

SCALE = SimulatorScale(
    seed=11, apps=2, days=2, conversations_per_day=12, max_turns=3, evaluation_runs_per_app=3
)
TOKEN = "sim-token"


def expected_headers(app_index: int, window: TimeWindow, sources: tuple[str, ...] = ()) -> dict[str, Any]:
    """Header by name of every corpus conversation of the app starting inside `window`."""
    headers = {}
    for day in range(SCALE.days):
        for index in range(SCALE.conversations_per_day):
            header = conversation_header(SCALE, ConversationKey(app_index, day, index))
            micros = header.start // 1000
            if window.since_micros <= micros < window.until_micros and (
                not sources or header.source in sources
            ):
                headers[header.name] = header
    return headers


CONFIGS = {
    "mixed-framing": SimulatorConfig(scale=SCALE, summary_fraction=0.4, short_page_fraction=0.4),
    "text-only-sse": SimulatorConfig(scale=SCALE, response_mode="sse", structured_content=False),
    "session-and-token": SimulatorConfig(scale=SCALE, require_session=True, required_token=TOKEN),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_conversation_of_the_scale_arrives_once_and_complete(name: str) -> None:
    config = CONFIGS[name]
    whole = TimeWindow.for_days(*SCALE.window)
    with running_simulator(config) as sim:
        settings = CesSettings(mcp_url=sim.url, apps=sim.apps, access_token=TOKEN)
        with CesMcpClient(settings, rate_limiter=fast_limiter()) as client:
            for app_index, app in enumerate(sim.apps):
                records = list(iter_conversation_records(client, app, whole, Listing(page_size=5)))
                got = list(resolve_conversations(records, whole))
                expected = expected_headers(app_index, whole)
                assert [c["name"] for c in got] == list(dict.fromkeys(c["name"] for c in got))
                assert {c["name"] for c in got} == set(expected)
                for item in got:
                    assert item == conversation(SCALE, expected[item["name"]].key)
                runs = [
                    run
                    for r in iter_evaluation_run_records(client, app, page_size=2)
                    for run in r.result.get("evaluationRuns", [])
                ]
                assert len({run["name"] for run in runs}) == len(runs) == SCALE.evaluation_runs_per_app
            stats = client.stats
    assert stats.tool_calls["get_conversation"] > 0
    assert stats.session_initializations == (1 if config.require_session else 0)


def test_one_day_and_one_source() -> None:
    day = TimeWindow.for_day(SCALE.start_date + timedelta(days=1))
    with (
        running_simulator(CONFIGS["mixed-framing"]) as sim,
        CesMcpClient(CesSettings(mcp_url=sim.url), rate_limiter=fast_limiter()) as client,
    ):
        records = list(
            iter_conversation_records(client, sim.apps[1], day, Listing(sources=("LIVE",), page_size=4))
        )
        got = list(resolve_conversations(records, day))
    expected = expected_headers(1, day, ("LIVE",))
    assert expected and {c["name"] for c in got} == set(expected)
    assert all(c["source"] == "LIVE" for c in got)
