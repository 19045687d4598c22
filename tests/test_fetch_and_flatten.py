"""Fetch and flatten in one pass (the bulk ingest's worker) against the simulator over HTTP.

It must leave the lake a fetch followed by a flatten leaves: the same raw lines and the same
Parquet tables; and, when the fetch fails part-way, the partition's previous files untouched.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from client_fixtures import Call, mcp_server, settings_for
from starlette.responses import Response

from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesError
from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.config import CesSettings
from pipelines.ingest.fetch import fetch_conversation_partition
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.ingest.stream import fetch_and_flatten_conversation_partition, ingest_task
from pipelines.lake.store import Lake
from pipelines.transform.schemas import CONVERSATION_TABLES, REJECTS

SCALE = SimulatorScale(seed=11, apps=1, days=1, conversations_per_day=120, max_turns=4, span_depth=3)
DAY = SCALE.start_date
TABLES = (*CONVERSATION_TABLES, REJECTS)


def settings(url: str, **overrides: object) -> CesSettings:
    return CesSettings(mcp_url=url, max_rps=1000, page_size=25, **overrides)  # type: ignore[arg-type]


def raw_lines(lake: Lake, app: str, day: date = DAY) -> list[dict]:
    """The raw records without the time they were fetched at."""
    records = [orjson.loads(line) for line in lake.read_raw_lines(CONVERSATIONS_DATASET, app, day)]
    return [{k: v for k, v in record.items() if k != "fetched_at"} for record in records]


def tables(lake: Lake, app: str, day: date = DAY) -> dict[str, list[dict]]:
    found = {}
    for spec in TABLES:
        [path] = Path(lake.root, "tables", spec.name).glob(f"**/date={day}/*.parquet")
        found[spec.name] = pq.read_table(path).to_pylist()
    return found


def test_one_pass_leaves_the_lake_a_fetch_then_a_flatten_leaves(tmp_path: Path) -> None:
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25)) as sim:
        app = sim.apps[0]
        apart, together = Lake(str(tmp_path / "apart")), Lake(str(tmp_path / "together"))
        with CesMcpClient(settings(sim.url)) as client:
            fetched = fetch_conversation_partition(client, apart, app, DAY, page_size=25)
            flattened = flatten_conversation_partition(apart, app, DAY)
            fetched_once, flattened_once = fetch_and_flatten_conversation_partition(
                client, together, app, DAY, page_size=25
            )
    assert fetched.hydrated > 0 and fetched.pages > 1
    assert (fetched_once.pages, fetched_once.listed, fetched_once.hydrated, fetched_once.records) == (
        fetched.pages,
        fetched.listed,
        fetched.hydrated,
        fetched.records,
    )
    assert fetched_once.path == together.raw_path(CONVERSATIONS_DATASET, app, DAY)
    assert flattened_once.rows == flattened.rows and flattened.rows["conversations"] == 120
    assert raw_lines(together, app) == raw_lines(apart, app)
    assert tables(together, app) == tables(apart, app)


def test_the_worker_task_reports_rows_and_requests(tmp_path: Path) -> None:
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25)) as sim:
        summary = ingest_task(str(tmp_path), sim.apps[0], DAY, settings(sim.url))
    assert summary["rows"]["conversations"] == 120 and summary["rows"]["spans"] > 120
    assert summary["listed"] == 120 and summary["hydrated"] > 0
    assert summary["requests"] == summary["pages"] + summary["hydrated"]


@pytest.mark.parametrize("spec", ["bad-json:0.2,seed=3", "cut-sse:0.2,seed=5"])
def test_a_fetch_failing_part_way_leaves_the_previous_files(tmp_path: Path, spec: str) -> None:
    lake = Lake(str(tmp_path))
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25)) as sim:
        app = sim.apps[0]
        with CesMcpClient(settings(sim.url)) as client:
            fetch_and_flatten_conversation_partition(client, lake, app, DAY, page_size=25)
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    faults = SimulatedFaults(spec)
    with running_simulator(SimulatorConfig(scale=SCALE, page_size_max=25, faults=faults)) as sim:
        with (
            CesMcpClient(settings(sim.url, max_attempts=1)) as client,
            pytest.raises(CesError),
        ):
            fetch_and_flatten_conversation_partition(client, lake, app, DAY, page_size=25)
        requests = client.stats.requests
    assert requests > 1  # it failed after the first page, with lines already written
    after = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert after == before  # no temporary file left either


# -- a server that writes its JSON its own way ---------------------------------------------------

ODD_APP = "projects/p/locations/global/apps/a"
ODD_DAY = date(2026, 3, 1)


def _named(cid: str) -> str:
    return f"{ODD_APP}/conversations/{cid}"


def _pretty(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def _turn(text: str) -> dict:
    span = {
        "name": "root",
        "startTime": "2026-03-01T08:00:00Z",
        "endTime": "2026-03-01T08:00:01.5Z",
        "duration": "1.500s",
        "attributes": {"tokens": [1, 2], "model": "m"},
    }
    return {"messages": [{"role": "user", "chunks": [{"text": text}]}], "rootSpan": span}


ODD_TEXTS: dict[str | None, bytes] = {
    # Pretty-printed pages: junk, no name, no startTime, a whole conversation, two summaries.
    None: _pretty(
        {
            "conversations": [
                "junk",
                {"startTime": "2026-03-01T01:00:00Z"},
                {"name": _named("no-start")},
                {"name": _named("whole"), "startTime": "2026-03-01T01:00:00Z", "turns": [_turn("hi")]},
                {"name": _named("summary"), "startTime": "2026-03-01T02:00:00Z", "turnCount": 1},
                {"name": _named("odd-count"), "startTime": "2026-03-01T03:00:00Z", "turnCount": 1},
            ],
            "nextPageToken": "t1",
        }
    ),
    # A duplicate, and a chunk of a kind the typed decode does not know.
    "t1": _pretty(
        {
            "conversations": [
                {"name": _named("whole"), "startTime": "2026-03-01T01:00:00Z", "turns": []},
                {
                    "name": _named("new-kind"),
                    "startTime": "2026-03-01T04:00:00Z",
                    "turns": [{"messages": [{"role": "agent", "chunks": [{"hologram": {"x": 1}}]}]}],
                },
            ]
        }
    ),
    # Hydrations: pretty-printed, and one whose turnCount is a string (proto3 JSON allows it).
    _named("summary"): _pretty(
        {"name": _named("summary"), "startTime": "2026-03-01T02:00:00Z", "turns": [_turn("full")]}
    ),
    _named("odd-count"): orjson.dumps(
        {
            "name": _named("odd-count"),
            "startTime": "2026-03-01T03:00:00Z",
            "turnCount": "1",
            "turns": [_turn("s")],
        }
    ),
}


def _odd_server(call: Call) -> Response:
    key = call.arguments.get("pageToken") if call.tool == "list_conversations" else call.arguments.get("name")
    text = ODD_TEXTS[key]
    body = b"".join(
        (
            b'{"jsonrpc":"2.0","id":',
            orjson.dumps(call.id),
            b',"result":{"content":[{"type":"text","text":',
            orjson.dumps(text.decode()),
            b'}],"structuredContent":',
            text,
            b"}}",
        )
    )
    return Response(body, media_type="application/json")


def test_one_pass_reads_odd_pages_as_a_flatten_of_the_lake_file_does(tmp_path: Path) -> None:
    """Pretty-printed JSON, objects the judge rejects, duplicates, shapes only the reference
    flattener reads: the one pass decodes what the server sent once, and still leaves exactly
    the raw lines, tables and rejects that a fetch then a flatten leave."""
    apart, together = Lake(str(tmp_path / "apart")), Lake(str(tmp_path / "together"))
    with mcp_server(_odd_server) as (server, url), CesMcpClient(settings_for(url)) as client:
        fetch_conversation_partition(client, apart, ODD_APP, ODD_DAY)
        flattened = flatten_conversation_partition(apart, ODD_APP, ODD_DAY)
        fetched_once, flattened_once = fetch_and_flatten_conversation_partition(
            client, together, ODD_APP, ODD_DAY
        )
        hydrated = {call.arguments["name"] for call in server.tool_calls("get_conversation")}
    assert hydrated == {_named("summary"), _named("odd-count")} and fetched_once.hydrated == 2
    assert flattened_once.rows == flattened.rows and flattened.rejects == flattened_once.rejects == 3
    assert raw_lines(together, ODD_APP, ODD_DAY) == raw_lines(apart, ODD_APP, ODD_DAY)
    got, expected = tables(together, ODD_APP, ODD_DAY), tables(apart, ODD_APP, ODD_DAY)
    assert got == expected
    names = {row["conversation_name"] for row in got["conversations"]}
    assert names == {_named(cid) for cid in ("whole", "summary", "odd-count", "new-kind")}
    assert {row["attributes"] for row in got["spans"]} == {'{"tokens":[1,2],"model":"m"}'}  # compact
    assert [row["chunk_type"] for row in got["chunks"] if row["conversation_name"] == _named("new-kind")] == [
        "hologram"
    ]
