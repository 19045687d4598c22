"""The MCP Streamable HTTP surface of the simulator: framing, sessions, auth, JSON-RPC and era errors."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest
from simulator_fixtures import ACCEPT_BOTH, MODERN_VERSION, McpHttp, messages_of, sse_events
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from pipelines.ces.simulator import SimulatorConfig, SimulatorScale, running_simulator

SCALE = SimulatorScale(apps=1, days=1, conversations_per_day=10, evaluation_runs_per_app=2)
LIST_TOOLS = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}


@pytest.fixture(scope="module")
def json_server() -> Iterator[McpHttp]:
    with running_simulator(SimulatorConfig(scale=SCALE, response_mode="json")) as handle:
        caller = McpHttp(handle.url)
        yield caller
        caller.close()


@pytest.fixture(scope="module")
def sse_server() -> Iterator[McpHttp]:
    with running_simulator(SimulatorConfig(scale=SCALE, response_mode="sse")) as handle:
        caller = McpHttp(handle.url)
        yield caller
        caller.close()


def test_json_framing(json_server: McpHttp) -> None:
    response = json_server.post(LIST_TOOLS)
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.json()["id"] == 7 and response.json()["result"]["tools"]


def test_sse_framing_has_comments_a_notification_first_and_multiline_data(
    sse_server: McpHttp, json_server: McpHttp
) -> None:
    bodies = [sse_server.post(LIST_TOOLS) for _ in range(4)]
    assert all(b.headers["content-type"].startswith("text/event-stream") for b in bodies)
    for body in bodies:
        assert body.text.startswith(": keep-alive\n")
        events = sse_events(body.text)
        assert [name for name, _ in events] == ["message", "message"]
        notification, reply = (orjson.loads(data) for _, data in events)
        assert notification["method"] == "notifications/message" and "id" not in notification
        assert reply == json_server.post(LIST_TOOLS).json()
    multiline = [b for b in bodies if b.text.count("\ndata: ") > 2]
    assert multiline and len(multiline) < len(bodies)  # some responses split over several data: lines


def test_progress_notification_when_the_caller_asks_for_it(sse_server: McpHttp) -> None:
    params = {"name": "get_evaluation_run", "arguments": {"name": "x"}, "_meta": {"progressToken": "p-1"}}
    notification, reply = messages_of(sse_server.request("tools/call", params))
    assert notification["method"] == "notifications/progress"
    assert notification["params"]["progressToken"] == "p-1" and reply["result"]["isError"] is True


def test_accept_header_decides_when_the_client_takes_only_one_form(
    sse_server: McpHttp, json_server: McpHttp
) -> None:
    json_only = sse_server.post(LIST_TOOLS, headers={"accept": "application/json"})
    assert json_only.headers["content-type"] == "application/json"
    sse_only = json_server.post(LIST_TOOLS, headers={"accept": "text/event-stream"})
    assert sse_only.headers["content-type"].startswith("text/event-stream")
    assert json_server.post(LIST_TOOLS, headers={"accept": "text/html"}).status_code == 406


def test_mixed_mode_alternates() -> None:
    with running_simulator(SimulatorConfig(scale=SCALE)) as handle:
        caller = McpHttp(handle.url)
        kinds = [caller.post(LIST_TOOLS).headers["content-type"].split(";")[0] for _ in range(4)]
        caller.close()
    assert kinds == ["application/json", "text/event-stream"] * 2


def test_json_rpc_errors(json_server: McpHttp) -> None:
    unknown = json_server.request("resources/list")
    assert unknown.status_code == 200 and unknown.json()["error"]["code"] == -32601
    garbage = json_server.post(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert garbage.status_code == 400 and garbage.json()["error"]["code"] == -32700
    for invalid in (b"[]", b'{"id": 1, "method": "ping"}', b'{"jsonrpc": "2.0", "id": 1, "method": 5}'):
        response = json_server.post(invalid)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32600
    unknown_tool = json_server.request("tools/call", {"name": "delete_everything", "arguments": {}})
    assert unknown_tool.json()["error"]["code"] == -32602
    assert json_server.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    assert json_server.http.get(json_server.url).status_code == 405


def test_tools_are_listed_with_schemas_and_annotations(json_server: McpHttp) -> None:
    tools = {tool["name"]: tool for tool in json_server.rpc("tools/list")["tools"]}
    assert set(tools) == {
        "list_conversations",
        "get_conversation",
        "list_evaluation_runs",
        "get_evaluation_run",
        "run_evaluation",
        "get_operation",
        "list_evaluation_results",
    }
    hints = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    assert [tools["get_evaluation_run"]["annotations"][h] for h in hints] == [True, False, True, False]
    assert [tools["list_conversations"]["annotations"][h] for h in hints] == [True, False, True, False]
    assert [tools["run_evaluation"]["annotations"][h] for h in hints] == [False, False, False, False]
    assert all(tool["inputSchema"]["type"] == "object" and "outputSchema" in tool for tool in tools.values())
    assert tools["list_conversations"]["inputSchema"]["required"] == ["parent"]


def test_text_only_results_when_structured_content_is_off() -> None:
    with running_simulator(SimulatorConfig(scale=SCALE, structured_content=False)) as handle:
        caller = McpHttp(handle.url)
        result = caller.tool_result("list_conversations", parent=handle.apps[0], pageSize=2)
        tools = caller.rpc("tools/list")["tools"]
        caller.close()
    assert (
        "structuredContent" not in result
        and len(orjson.loads(result["content"][0]["text"])["conversations"]) == 2
    )
    assert not any("outputSchema" in tool for tool in tools)


def _initialize(caller: McpHttp) -> httpx.Response:
    return caller.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
    )


def test_session_flow_when_sessions_are_required() -> None:
    with running_simulator(SimulatorConfig(scale=SCALE, require_session=True)) as handle:
        caller = McpHttp(handle.url)
        missing = caller.post(LIST_TOOLS)
        assert missing.status_code == 400
        assert missing.json()["error"] == {"code": -32600, "message": "Bad Request: Missing session ID"}
        initialized = _initialize(caller)
        session = initialized.headers["mcp-session-id"]
        assert messages_of(initialized)[-1]["result"]["protocolVersion"] == "2025-06-18"
        headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        assert (
            caller.post(
                {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
            ).status_code
            == 202
        )
        assert caller.post(LIST_TOOLS, headers=headers).status_code == 200
        assert caller.post(LIST_TOOLS, headers={"mcp-session-id": "bogus"}).status_code == 404
        assert caller.http.delete(handle.url, headers=headers).status_code == 200
        assert caller.post(LIST_TOOLS, headers=headers).status_code == 404  # ended sessions are gone
        caller.close()


def test_stateless_by_default(json_server: McpHttp) -> None:
    assert "mcp-session-id" not in _initialize(json_server).headers
    assert json_server.post(LIST_TOOLS).status_code == 200  # no initialize needed at all


def test_bearer_token_is_required_when_configured() -> None:
    with running_simulator(SimulatorConfig(scale=SCALE, required_token="s3cret")) as handle:
        anonymous = McpHttp(handle.url).post(LIST_TOOLS)
        wrong = McpHttp(handle.url, {"authorization": "Bearer guess"}).post(LIST_TOOLS)
        right = McpHttp(handle.url, {"authorization": "Bearer s3cret"}).post(LIST_TOOLS)
    assert anonymous.status_code == wrong.status_code == 401
    assert anonymous.json()["error"]["status"] == "UNAUTHENTICATED" and "s3cret" not in wrong.text
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert right.status_code == 200


def _modern(method: str, params: dict[str, object], **header_overrides: str) -> tuple[dict, dict]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"mcp-protocol-version": MODERN_VERSION, "mcp-method": method, "accept": ACCEPT_BOTH}
    if method == "tools/call":
        headers["mcp-name"] = str(params["name"])
    headers.update(header_overrides)
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}, headers


def test_modern_requests_are_stateless_and_stamped(json_server: McpHttp) -> None:
    body, headers = _modern("tools/call", {"name": "get_evaluation_run", "arguments": {"name": "x"}})
    result = json_server.post(body, headers=headers).json()["result"]
    assert result["isError"] is True and result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "ces-simulator"
    body, headers = _modern("server/discover", {})
    discovered = json_server.post(body, headers=headers).json()["result"]
    assert discovered["supportedVersions"] == [MODERN_VERSION] and "tools" in discovered["capabilities"]
    body, headers = _modern("tools/list", {})
    listing = json_server.post(body, headers=headers).json()["result"]
    assert {"ttlMs", "cacheScope", "resultType"} <= set(listing)


def test_modern_envelope_errors(json_server: McpHttp) -> None:
    body, headers = _modern(
        "tools/call", {"name": "get_evaluation_run", "arguments": {}}, **{"mcp-name": "other"}
    )
    mismatch = json_server.post(body, headers=headers)
    assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == -32020
    body, headers = _modern("tools/list", {}, **{"mcp-protocol-version": "2099-01-01"})
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    unsupported = json_server.post(body, headers=headers).json()["error"]
    assert unsupported["code"] == -32022 and unsupported["data"]["supported"] == [MODERN_VERSION]
    body, headers = _modern("tools/list", {})
    del body["params"]["_meta"]
    assert json_server.post(body, headers=headers).json()["error"]["code"] == -32602
    body, headers = _modern("resources/list", {})
    assert json_server.post(body, headers=headers).status_code == 404


def test_fault_injection_seam_wraps_the_whole_app() -> None:
    def unavailable(app: ASGIApp) -> ASGIApp:
        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            await PlainTextResponse("try later", status_code=503, headers={"Retry-After": "1"})(
                scope, receive, send
            )

        return wrapped

    with running_simulator(SimulatorConfig(scale=SCALE, faults=unavailable, required_token="t")) as handle:
        response = McpHttp(handle.url).post(LIST_TOOLS)  # outermost: even before the token check
    assert response.status_code == 503 and response.headers["retry-after"] == "1"
