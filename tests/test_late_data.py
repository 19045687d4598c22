"""Late data: a backfill, then the server's data changes (late conversations arrive, open ones
finish and grow), then a second ingest. The warehouse must hold exactly the new truth, every
check must pass, and a rebuild from the raw lake must reproduce it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest
from client_fixtures import fast_limiter
from dagster_runs import run_partitions

from pipelines.ces.client import CesMcpClient
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.corpus import ConversationKey, conversation, conversation_header
from pipelines.ces.simulator.corpus.headers import visible
from pipelines.ces.simulator.server import config as simulator_config
from pipelines.ces.tools import Listing, iter_conversation_records, resolve_conversations
from pipelines.ces.window import TimeWindow
from pipelines.config import CesSettings
from pipelines.transform.schemas import CONVERSATION_TABLES
from pipelines.warehouse.duck import Warehouse

SCALE = SimulatorScale(
    seed=21, apps=2, days=3, conversations_per_day=16, max_turns=4, evaluation_runs_per_app=0
)
DAYS = [SCALE.start_date + timedelta(days=i) for i in range(SCALE.days)]
LATE = datetime(2026, 11, 6, 0, 0, tzinfo=UTC)  # days later: everything arrived and finished


def nanos(instant: datetime) -> int:
    return (instant - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000


def mid_conversation_instant() -> datetime:
    """An instant on the last day while some conversation is between its first and last turn."""
    for index in range(SCALE.conversations_per_day // 2, SCALE.conversations_per_day):
        item = conversation(SCALE, ConversationKey(0, SCALE.days - 1, index))
        starts = [turn["rootSpan"]["startTime"] for turn in item.get("turns", [])]
        if len(starts) >= 2:
            first, second = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in starts[:2])
            return first + (second - first) / 2
    raise AssertionError("no multi-turn conversation on the last day")


EARLY = mid_conversation_instant()


def truth(as_of: datetime) -> dict[str, tuple[bool, int]]:
    """Per conversation the server serves at `as_of`: (finished, turns), from the corpus itself."""
    served = {}
    for app in range(SCALE.apps):
        for day in range(SCALE.days):
            for index in range(SCALE.conversations_per_day):
                key = ConversationKey(app, day, index)
                header = conversation_header(SCALE, key)
                if header.start <= nanos(as_of) and visible(SCALE, header, nanos(as_of)):
                    item = conversation(SCALE, key, nanos(as_of))
                    served[item["name"]] = ("endTime" in item, len(item.get("turns", [])))
    return served


def loaded(warehouse: Warehouse) -> dict[str, tuple[bool, int]]:
    with warehouse.connect(read_only=True) as conn:
        rows = conn.execute(
            "SELECT c.conversation_name, c.end_time IS NOT NULL, count(t.turn_index) "
            "FROM conversations c LEFT JOIN turns t USING (conversation_name) GROUP BY ALL"
        ).fetchall()
    return {name: (finished, turns) for name, finished, turns in rows}


def contents(warehouse: Warehouse) -> dict[str, list[tuple]]:
    with warehouse.connect(read_only=True) as conn:
        return {
            spec.name: sorted(conn.execute(f"SELECT * FROM {spec.name}").fetchall(), key=repr)
            for spec in CONVERSATION_TABLES
        }


def ingest(as_of: datetime, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch) -> list:
    """Backfill every app and day from a simulator whose clock reads `as_of`."""
    with running_simulator(SimulatorConfig(scale=SCALE, as_of=as_of)) as sim:
        monkeypatch.setenv("CES_MCP_URL", sim.url)
        partitions = [(app, day) for day in DAYS for app in sim.apps]
        return run_partitions("ingest_conversations", partitions, instance=instance)


def test_a_second_ingest_after_the_data_changed_holds_exactly_the_new_truth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CES_APPS", ",".join(SCALE.app_names))
    monkeypatch.setenv("CES_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("CES_WAREHOUSE", str(tmp_path / "w.duckdb"))
    monkeypatch.setenv("CES_MAX_RPS", "500")
    warehouse = Warehouse(str(tmp_path / "w.duckdb"))
    instance = dg.DagsterInstance.ephemeral()
    early, late = truth(EARLY), truth(LATE)
    assert set(late) - set(early), "some conversations must arrive late"
    assert any(not early[n][0] and late[n][0] for n in early), "some open conversation must finish"
    assert any(early[n][1] < late[n][1] for n in early), "some conversation must gain turns"

    first = ingest(EARLY, instance, monkeypatch)
    assert all(outcome.success for outcome in first), [o.error for o in first]
    assert loaded(warehouse) == early

    second = ingest(LATE, instance, monkeypatch)
    assert all(outcome.success for outcome in second), [o.error for o in second]
    assert loaded(warehouse) == late
    failed = [check for outcome in second for check in outcome.failed_checks]
    assert [check for check in failed if "conversations_are_fresh" not in check] == []
    truth_rows = contents(warehouse)

    rebuilt = run_partitions(
        "rebuild_conversations",
        [(app, day) for day in DAYS for app in SCALE.app_names],
        instance=instance,
    )
    assert all(outcome.success for outcome in rebuilt)
    assert contents(warehouse) == truth_rows


def test_a_simulator_on_the_wall_clock_serves_each_request_what_has_arrived_by_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`simulate --as-of now`: the clock is read at each request, so one server serves a later
    listing the conversations that arrived since, and the turns and end of those that were open:
    what a schedule's next run finds."""
    clock = SimpleNamespace(time_ns=lambda: nanos(EARLY))
    monkeypatch.setattr(simulator_config, "time", clock)  # the wall clock, as the test sets it
    whole = TimeWindow.for_days(*SCALE.window)
    with running_simulator(SimulatorConfig(scale=SCALE, as_of="now")) as sim:
        settings = CesSettings(mcp_url=sim.url, apps=sim.apps)
        with CesMcpClient(settings, rate_limiter=fast_limiter()) as client:
            for instant in (EARLY, LATE):
                clock.time_ns = lambda instant=instant: nanos(instant)
                served = {}
                for app in sim.apps:
                    records = iter_conversation_records(client, app, whole, Listing(page_size=10))
                    for item in resolve_conversations(records, whole):
                        served[item["name"]] = ("endTime" in item, len(item.get("turns", [])))
                assert served == truth(instant)
