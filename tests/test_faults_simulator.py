"""The simulator's fault injection on its own: the SPEC syntax, determinism, and what each fault
looks like on the wire to a plain HTTP caller (no project client involved)."""

from __future__ import annotations

import time

import httpx
import orjson
import pytest
from simulator_fixtures import ACCEPT_BOTH, McpHttp

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator
from pipelines.ces.simulator.server.faults import (
    ALL_KINDS,
    KINDS,
    SHAPE_KINDS,
    FaultSpec,
    FaultSpecError,
    SimulatedFaults,
    parse_fault_spec,
)
from pipelines.ces.sse import parse_sse

SCALE = SimulatorScale(seed=2, apps=1, days=1, conversations_per_day=30, max_turns=2)


def test_spec_syntax() -> None:
    spec = parse_fault_spec(" 503:0.1, 429:0.05,reset:0.02 ,cut-sse:0.05,seed=7,limit=2,retry-after=0.5")
    assert dict(spec.rates) == {"503": 0.1, "429": 0.05, "reset": 0.02, "cut-sse": 0.05}
    assert (spec.seed, spec.limit, spec.retry_after, spec.slow_seconds) == (7, 2, 0.5, 90.0)
    assert parse_fault_spec(spec.describe()) == spec
    everything = parse_fault_spec("all:0.01,seed=3")
    assert set(everything.rates) == set(ALL_KINDS) and everything.limit is None
    assert set(parse_fault_spec("shapes:0.5").rates) == set(SHAPE_KINDS)
    assert parse_fault_spec("") == FaultSpec()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("404:0.1", "unknown fault kind '404'"),
        ("503:2", "within \\[0, 1\\]"),
        ("503:often", "not a number"),
        ("seed=x", "not an integer"),
        ("speed=3", "unknown option 'speed'"),
        ("503", "expected KIND:RATE or OPTION=VALUE"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(FaultSpecError, match=message):
        parse_fault_spec(text)


def decisions(spec: str, requests: list[bytes]) -> list[str | None]:
    faults = SimulatedFaults(spec)
    return [faults.decide("transport", KINDS, key) for key in requests]


def test_decisions_depend_on_seed_request_and_occurrence_only() -> None:
    requests = [f"request-{i % 40}".encode() for i in range(400)]
    first = decisions("503:0.2,reset:0.1,seed=1", requests)
    assert first == decisions("503:0.2,reset:0.1,seed=1", requests)
    assert first != decisions("503:0.2,reset:0.1,seed=2", requests)
    assert 40 < sum(kind is not None for kind in first) < 160
    # Interleaving does not matter: each request's own sequence of outcomes is the same.
    shuffled = sorted(range(400), key=lambda i: (i % 7, i))
    faults = SimulatedFaults("503:0.2,reset:0.1,seed=1")
    again = {i: faults.decide("transport", KINDS, requests[i]) for i in shuffled}
    per_request = {}
    for i in range(400):
        per_request.setdefault(requests[i], []).append(first[i])
    replayed = {}
    for i in shuffled:
        replayed.setdefault(requests[i], []).append(again[i])
    assert replayed == per_request


def test_limit_bounds_the_faults_one_request_meets() -> None:
    faults = SimulatedFaults("503:1,limit=2")
    assert [faults.decide("transport", KINDS, b"r") for _ in range(4)] == ["503", "503", None, None]
    assert faults.injected == {"503": 2}


@pytest.fixture
def caller():
    def make(spec: str, **config):
        faults = SimulatedFaults(spec)
        return faults, running_simulator(SimulatorConfig(scale=SCALE, faults=faults, **config))

    return make


def list_request() -> dict:
    return {"name": "list_conversations", "arguments": {"parent": SCALE.app_names[0], "pageSize": 10}}


@pytest.mark.parametrize(
    ("spec", "status", "check"),
    [
        (
            "429:1,retry-after=2",
            429,
            lambda r: r.headers["retry-after"] == "2" and b"RESOURCE_EXHAUSTED" in r.content,
        ),
        ("500:1", 500, lambda r: r.json()["error"]["status"] == "INTERNAL"),
        ("502:1", 502, lambda r: r.headers["content-type"].startswith("text/plain")),
        ("503:1", 503, lambda r: r.json()["error"]["status"] == "UNAVAILABLE"),
        ("504:1", 504, lambda r: b"Gateway Timeout" in r.content),
    ],
)
def test_status_faults(caller, spec: str, status: int, check) -> None:
    faults, simulator = caller(f"{spec},limit=1")
    with simulator as sim:
        http = McpHttp(sim.url)
        first = http.request("tools/call", list_request())
        second = http.request("tools/call", list_request())
        http.close()
    assert first.status_code == status and check(first)
    assert second.status_code == 200  # limit=1: the same request goes through the second time
    assert faults.injected == {spec.split(":")[0]: 1}


def unavailable(status: dict) -> bool:
    return status == {"code": 14, "message": "The service is currently unavailable (simulated fault)."}


def test_rpc_error_carries_a_google_status(caller) -> None:
    faults, simulator = caller("rpc-error:1,limit=1")
    with simulator as sim:
        http = McpHttp(sim.url)
        reply = http.request("tools/call", list_request())
        assert http.request("tools/call", list_request()).status_code == 200
        http.close()
    error = reply.json()["error"]
    assert reply.status_code == 200 and error["code"] == -32603 and unavailable(error["data"])
    assert error["message"].startswith("UNAVAILABLE: ")
    assert faults.injected == {"rpc-error": 1}


def test_tool_errors_say_unavailable_in_each_of_their_shapes(caller) -> None:
    faults, simulator = caller("tool-error:1,limit=1")
    shapes = set()
    with simulator as sim:
        http = McpHttp(sim.url)
        assert http.rpc("tools/list")["tools"]  # only tool calls meet it
        for size in range(1, 13):
            result = http.tool_result("list_conversations", parent=SCALE.app_names[0], pageSize=size)
            assert result["isError"] is True
            text = result["content"][0]["text"]
            if "structuredContent" in result:
                assert unavailable(result["structuredContent"])
                shapes.add("structured")
            elif text.startswith("{"):
                assert unavailable(orjson.loads(text))
                shapes.add("status json")
            else:
                assert text.startswith("UNAVAILABLE: ")
                shapes.add("text")
        http.close()
    assert shapes == {"structured", "status json", "text"}
    assert faults.injected == {"tool-error": 12}


def test_disabled_service_is_a_permanent_google_error(caller) -> None:
    faults, simulator = caller("403-disabled:1,limit=1")
    with simulator as sim:
        response = McpHttp(sim.url).request("tools/call", list_request())
    error = response.json()["error"]
    assert response.status_code == 403 and error["status"] == "PERMISSION_DENIED"
    assert [detail["reason"] for detail in error["details"]] == ["SERVICE_DISABLED"]
    assert faults.injected == {"403-disabled": 1}


def test_sse_priming_event_comes_first_and_carries_no_data(caller) -> None:
    faults, simulator = caller("sse-priming:1,limit=1", response_mode="json")
    with simulator as sim:
        response = McpHttp(sim.url).request("tools/call", list_request())
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.startswith("id: 0\ndata:\n\n")
    events = list(parse_sse([response.content]))
    assert '"result"' in events[-1].data
    assert faults.injected == {"sse-priming": 1}


def test_huge_answer_is_whitespace_then_the_answer(caller) -> None:
    faults, simulator = caller("huge:1,limit=1,huge-mb=3", response_mode="sse")
    with simulator as sim:
        response = McpHttp(sim.url).request("tools/call", list_request())
    assert response.headers["content-type"] == "application/json"
    assert len(response.content) > 3 * 2**20 and not response.content[: 3 * 2**20].strip()
    assert orjson.loads(response.content)["result"]["structuredContent"]["conversations"]
    assert faults.injected == {"huge": 1}


def test_drip_sends_the_answer_at_the_asked_rate(caller) -> None:
    faults, simulator = caller("drip:1,limit=1,drip-bps=20000", response_mode="json")
    with simulator as sim:
        started = time.monotonic()
        response = McpHttp(sim.url).request("tools/call", list_request())
        took = time.monotonic() - started
    assert orjson.loads(response.content)["result"]["structuredContent"]["conversations"]
    assert took >= 0.9 * len(response.content) / 20000
    assert faults.injected == {"drip": 1}


def test_reset_drops_the_connection(caller) -> None:
    faults, simulator = caller("reset:1,limit=1")
    with simulator as sim:
        http = McpHttp(sim.url)
        with pytest.raises(httpx.TransportError):
            http.request("tools/call", list_request())
        assert http.request("tools/call", list_request()).status_code == 200
        http.close()
    assert faults.injected == {"reset": 1}


def test_slow_answers_after_the_delay(caller) -> None:
    faults, simulator = caller("slow:1,limit=1,slow-seconds=0.5")
    with simulator as sim:
        with httpx.Client(timeout=0.2) as impatient, pytest.raises(httpx.ReadTimeout):
            impatient.post(sim.url, content=orjson.dumps(_rpc(list_request())), headers=_HEADERS)
        with httpx.Client(timeout=5) as patient:
            patient.post(sim.url, content=orjson.dumps(_rpc(list_request())), headers=_HEADERS)
    assert faults.injected == {"slow": 1}


def test_cut_sse_stops_the_stream_halfway(caller) -> None:
    faults, simulator = caller("cut-sse:1,limit=4", response_mode="json")
    outcomes = set()
    with simulator as sim, httpx.Client(timeout=5) as http:
        for page_size in (5, 6, 7, 8):
            request = _rpc(
                {**list_request(), "arguments": {**list_request()["arguments"], "pageSize": page_size}}
            )
            try:
                response = http.post(sim.url, content=orjson.dumps(request), headers=_HEADERS)
            except httpx.RemoteProtocolError:
                outcomes.add("dropped")
                continue
            assert response.headers["content-type"].startswith("text/event-stream")
            events = list(parse_sse([response.content]))  # an event cut off at the end is dropped
            assert not any('"result"' in event.data for event in events)
            outcomes.add("ended early")
    assert faults.injected == {"cut-sse": 4} and outcomes == {"dropped", "ended early"}


def test_bad_json_is_half_a_body(caller) -> None:
    faults, simulator = caller("bad-json:1,limit=1", response_mode="sse")
    with simulator as sim:
        response = McpHttp(sim.url).request("tools/call", list_request())
    assert response.headers["content-type"] == "application/json"
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(response.content)
    assert faults.injected == {"bad-json": 1}


def pages(http: McpHttp, **arguments) -> list[dict]:
    found, token = [], None
    for _ in range(100):
        result = http.tool_result(
            "list_conversations", **arguments, **({"pageToken": token} if token else {})
        )
        if result.get("isError"):
            found.append({"error": result["content"][0]["text"]})
            return found
        page = result["structuredContent"]
        found.append(page)
        token = page.get("nextPageToken")
        if not token:
            return found
    raise AssertionError("endless listing")


def test_data_faults_shape_the_pages(caller) -> None:
    arguments = {"parent": SCALE.app_names[0], "pageSize": 10}
    _, clean = caller("")
    with clean as sim:
        baseline = pages(McpHttp(sim.url), **arguments)
    names = [c["name"] for page in baseline for c in page.get("conversations", [])]
    assert len(names) == len(set(names)) == 30

    for spec, check in [
        ("expire-token:1", lambda got: "page token expired" in got[-1]["error"] and len(got) == 2),
        ("dup:1", lambda got: len(listed(got)) > 30 and set(listed(got)) == set(names)),
        ("repeat-page:0.5", lambda got: listed(got) != names and set(listed(got)) == set(names)),
    ]:
        faults, simulator = caller(spec)
        with simulator as sim:
            got = pages(McpHttp(sim.url), **arguments)
        assert check(got), (spec, got)
        assert faults.injected[spec.split(":")[0]] >= 1


def listed(got: list[dict]) -> list[str]:
    return [c["name"] for page in got for c in page.get("conversations", [])]


_HEADERS = {"content-type": "application/json", "accept": ACCEPT_BOTH}


def _rpc(params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
