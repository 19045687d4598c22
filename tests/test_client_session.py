"""Protocol negotiation: stateless first, sessions when a server asks, and Mcp-Param headers."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
import pytest
from client_fixtures import Call, fast_limiter, mcp_server, rpc_error, rpc_result, settings_for, tool_result
from starlette.responses import Response

from pipelines.ces.client import CesMcpClient
from pipelines.ces.errors import CesTransportError
from pipelines.ces.protocol import encode_header_value, param_headers

PAYLOAD = {"name": "projects/p/locations/l/apps/a/conversations/c1"}


def client_for(url: str) -> CesMcpClient:
    return CesMcpClient(settings_for(url), rate_limiter=fast_limiter())


def json_error(status: int, code: int, message: str, data: Any = None) -> Response:
    """A transport-level rejection as the MCP SDKs send it: JSON-RPC error with `id: null`."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error})
    return Response(body, status_code=status, media_type="application/json")


class SessionServer:
    """A session-era server, answering like the MCP SDK's stateful Streamable HTTP transport."""

    def __init__(self, *, version: str = "2025-06-18", issue_ids: bool = True):
        self.version = version
        self.issue_ids = issue_ids
        self.sessions: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, call: Call) -> Response:
        session_id = call.headers.get("mcp-session-id")
        if call.http_method == "DELETE":
            with self._lock:
                self.sessions.discard(session_id or "")
            return Response(status_code=200)
        if call.method == "initialize":
            headers = {}
            if self.issue_ids:
                session_id = uuid.uuid4().hex
                with self._lock:
                    self.sessions.add(session_id)
                headers["mcp-session-id"] = session_id
            result = {
                "protocolVersion": self.version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "s"},
            }
            return rpc_result(call, result, **headers)
        rejection = self.reject(call, session_id)
        if rejection is not None:
            return rejection
        if call.method == "notifications/initialized":
            return Response(status_code=202)
        return rpc_result(call, tool_result(PAYLOAD))

    def reject(self, call: Call, session_id: str | None) -> Response | None:
        if session_id is None:
            return json_error(400, -32600, "Bad Request: Missing session ID")
        with self._lock:
            known = session_id in self.sessions
        return None if known else json_error(404, -32600, "Session not found")


def methods(calls: list[Call]) -> list[str | None]:
    return [call.method or call.http_method for call in calls]


def test_session_server_gets_a_handshake_then_the_request_again() -> None:
    server_logic = SessionServer()
    with mcp_server(server_logic) as (server, url), client_for(url) as client:
        assert client.call_tool("get_conversation", {"name": "c1"}) == PAYLOAD
        assert client.call_tool("get_conversation", {"name": "c2"}) == PAYLOAD
        stats = client.stats
        assert "session protocol 2025-06-18" in repr(client)
    assert methods(server.calls) == [
        "tools/call",
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/call",
        "DELETE",
    ]
    first, initialize, initialized, retried, second, delete = server.calls
    assert initialize.params["protocolVersion"] == "2025-11-25"
    assert initialize.params["clientInfo"]["name"] == "ces-pipeline"
    assert "mcp-protocol-version" not in initialize.headers and "mcp-session-id" not in initialize.headers
    session_id = initialized.headers["mcp-session-id"]
    for call in (initialized, retried, second, delete):
        assert call.headers["mcp-session-id"] == session_id
        assert call.headers["mcp-protocol-version"] == "2025-06-18"
    assert retried.arguments == first.arguments == {"name": "c1"}
    assert "_meta" not in retried.params
    assert stats.session_initializations == 1 and stats.requests == 5
    assert server_logic.sessions == set()  # ended on close
    client.close()  # closing again sends nothing
    assert methods(server.calls).count("DELETE") == 1


def test_expired_session_is_reinitialised_once() -> None:
    server_logic = SessionServer()
    with mcp_server(server_logic) as (server, url), client_for(url) as client:
        client.call_tool("get_conversation", {"name": "c1"})
        server_logic.sessions.clear()  # the server forgets the session
        assert client.call_tool("get_conversation", {"name": "c2"}) == PAYLOAD
        assert client.stats.session_initializations == 2
    assert methods(server.calls)[4:8] == [
        "tools/call",
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert server.calls[4].headers["mcp-session-id"] != server.calls[7].headers["mcp-session-id"]


class ForgetfulServer(SessionServer):
    """Issues sessions but never recognises them again."""

    def reject(self, call: Call, session_id: str | None) -> Response | None:
        if call.method == "notifications/initialized":
            return None
        return (
            json_error(404, -32600, "Session not found") if session_id else super().reject(call, session_id)
        )


def test_a_session_that_keeps_expiring_is_not_retried_forever() -> None:
    with (
        mcp_server(ForgetfulServer()) as (server, url),
        client_for(url) as client,
        pytest.raises(CesTransportError) as info,
    ):
        client.call_tool("get_conversation", {"name": "c1"})
    assert info.value.status_code == 404
    assert methods(server.calls).count("initialize") == 1


def test_concurrent_callers_share_one_handshake() -> None:
    with mcp_server(SessionServer()) as (server, url), client_for(url) as client:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(
                pool.map(lambda i: client.call_tool("get_conversation", {"name": f"c{i}"}), range(16))
            )
        assert results == [PAYLOAD] * 16
        assert client.stats.session_initializations == 1
    assert methods(server.calls).count("initialize") == 1
    answered = [c for c in server.calls if c.method == "tools/call" and "mcp-session-id" in c.headers]
    assert sorted(c.arguments["name"] for c in answered) == sorted(f"c{i}" for i in range(16))


class HandshakeOnlyServer(SessionServer):
    """A stateless server of the handshake era: rejects 2026-07-28, issues no session ids."""

    def __init__(self) -> None:
        super().__init__(issue_ids=False)

    def reject(self, call: Call, session_id: str | None) -> Response | None:
        if call.headers.get("mcp-protocol-version") == "2026-07-28":
            data = {"supported": ["2025-03-26", "2025-06-18"], "requested": "2026-07-28"}
            return json_error(400, -32022, "Unsupported protocol version", data)
        return None


def test_server_without_2026_support_is_spoken_to_in_its_version_without_session() -> None:
    with mcp_server(HandshakeOnlyServer()) as (server, url), client_for(url) as client:
        assert client.call_tool("get_conversation", {"name": "c1"}) == PAYLOAD
        client.call_tool("get_conversation", {"name": "c2"})
    assert methods(server.calls) == [
        "tools/call",
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/call",
    ]
    for call in server.calls[2:]:
        assert call.headers["mcp-protocol-version"] == "2025-06-18"
        assert "mcp-session-id" not in call.headers


def test_unsupported_version_without_a_handshake_version_is_not_a_fallback() -> None:
    def handler(call: Call) -> Response:
        data = {"supported": ["2027-01-01"], "requested": "2026-07-28"}
        return json_error(400, -32022, "Unsupported protocol version", data)

    with (
        mcp_server(handler) as (server, url),
        client_for(url) as client,
        pytest.raises(CesTransportError) as info,
    ):
        client.call_tool("get_conversation", {"name": "c1"})
    assert info.value.rpc_code == -32022
    assert methods(server.calls) == ["tools/call"]


def test_failed_handshake_leaves_the_client_stateless() -> None:
    handler = lambda call: json_error(400, -32600, "Bad Request: Missing session ID")  # noqa: E731
    with mcp_server(handler) as (server, url), client_for(url) as client:
        with pytest.raises(CesTransportError, match="Missing session ID"):
            client.call_tool("get_conversation", {"name": "c1"})
        assert "stateless" in repr(client)
    assert methods(server.calls) == ["tools/call", "initialize"]


# -- Mcp-Param headers -------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "parent": {"type": "string", "x-mcp-header": "Parent"},
        "pageSize": {"type": "integer", "x-mcp-header": "PageSize"},
        "options": {"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry"}}},
        "filter": {"type": "string"},
    },
}


def test_param_headers_mirror_annotated_arguments() -> None:
    arguments = {"parent": "apps/ü", "pageSize": 5, "options": {"dry": True}, "filter": "x"}
    assert param_headers(SCHEMA, arguments) == {
        "Mcp-Param-Parent": encode_header_value("apps/ü"),
        "Mcp-Param-PageSize": "5",
        "Mcp-Param-Dry": "true",
    }
    assert encode_header_value("apps/ü").startswith("=?base64?")
    assert param_headers(SCHEMA, {"filter": "x"}) == {}


def test_strict_server_wanting_param_headers_gets_them_after_tools_are_listed() -> None:
    def strict(call: Call) -> Response:
        if call.method == "tools/list":
            return rpc_result(call, {"tools": [{"name": "list_conversations", "inputSchema": SCHEMA}]})
        if call.headers.get("mcp-param-parent") != call.arguments.get("parent"):
            return rpc_error(call, -32020, "Mcp-Param-Parent header is missing", status=400)
        return rpc_result(call, tool_result(PAYLOAD))

    with mcp_server(strict) as (server, url), client_for(url) as client:
        assert client.call_tool("list_conversations", {"parent": "apps/a"}) == PAYLOAD
        assert client.call_tool("list_conversations", {"parent": "apps/b"}) == PAYLOAD
    assert methods(server.calls) == ["tools/call", "tools/list", "tools/call", "tools/call"]
    assert server.calls[-1].headers["mcp-param-parent"] == "apps/b"
