"""The client against real HTTP servers on loopback: framings, results, errors, headers, secrets."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import orjson
import pytest
from client_fixtures import (
    Call,
    fast_limiter,
    mcp_server,
    rpc_error,
    rpc_result,
    serve,
    settings_for,
    sse_message,
    sse_response,
    tool_result,
)
from starlette.responses import Response, StreamingResponse

from pipelines.ces.client import CesMcpClient, RetryPolicy
from pipelines.ces.errors import CesProtocolError, CesRpcError, CesToolError, CesTransportError
from pipelines.ces.tools import run_evaluation

TOKEN = "ya29.secret-test-token"
PAYLOAD = {"conversations": [{"name": "c1"}], "nextPageToken": ""}
JSON = b"application/json"


def client_for(url: str, **settings: Any) -> CesMcpClient:
    return CesMcpClient(settings_for(url, **settings), rate_limiter=fast_limiter())


def answer(result: dict[str, Any]) -> Any:
    return lambda call: rpc_result(call, result)


def reply(response: Response) -> Any:
    return lambda call: response


def call_once(handler: Any, tool: str = "list_conversations", **settings: Any) -> dict[str, Any]:
    """Serve `handler`, make one tool call through a fresh client, return its output."""
    with mcp_server(handler) as (_, url), client_for(url, **settings) as client:
        return client.call_tool(tool, {})


# -- framings ----------------------------------------------------------------------------------


def test_json_body_with_structured_content() -> None:
    with mcp_server(answer(tool_result(PAYLOAD))) as (server, url), client_for(url) as client:
        assert client.call_tool("list_conversations", {"parent": "p"}) == PAYLOAD
    (call,) = server.calls
    assert call.tool == "list_conversations" and call.arguments == {"parent": "p"}
    assert call.body["jsonrpc"] == "2.0" and isinstance(call.id, int)


def test_stateless_request_carries_the_2026_envelope_and_routing_headers() -> None:
    with (
        mcp_server(answer(tool_result(PAYLOAD))) as (server, url),
        client_for(url, access_token=TOKEN, quota_project="billing-proj") as client,
    ):
        client.call_tool("get_conversation", {"name": "c1"})
    (call,) = server.calls  # no initialize, no notifications: one POST
    headers = call.headers
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json, text/event-stream"
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["x-goog-user-project"] == "billing-proj"
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert headers["mcp-method"] == "tools/call"
    assert headers["mcp-name"] == "get_conversation"
    assert "mcp-session-id" not in headers
    # The client's own headers, merged once when it was made.
    assert headers["user-agent"].startswith("ces-pipeline/")
    assert "gzip" in headers["accept-encoding"]
    meta = call.params["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "ces-pipeline"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}


def test_no_token_means_no_authorization_header() -> None:
    with mcp_server(answer(tool_result(PAYLOAD))) as (server, url), client_for(url) as client:
        client.call_tool("get_conversation", {"name": "c1"})
    assert "authorization" not in server.calls[0].headers
    assert "x-goog-user-project" not in server.calls[0].headers


def sse_handler(*chunks: str, delay: float = 0.0) -> Any:
    """An SSE answer whose chunks may use `{id}` for the request id."""

    def handle(call: Call) -> Response:
        return sse_response([chunk.replace("{id}", str(call.id)) for chunk in chunks], delay=delay)

    return handle


def response_json(result: dict[str, Any]) -> str:
    """A JSON-RPC response whose id is the `{id}` placeholder of `sse_handler`."""
    return (
        orjson.dumps({"jsonrpc": "2.0", "id": 999_999, "result": result}).decode().replace("999999", "{id}")
    )


def test_sse_response_after_comments_notifications_and_server_requests() -> None:
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    ping = {"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}
    other = {"jsonrpc": "2.0", "id": 424242, "result": {"stale": True}}
    handler = sse_handler(
        ": stream opened\n\n",
        sse_message(progress, event_id="e1"),
        "event: message\nretry: 3000\n" + sse_message(ping),
        sse_message(other),
        f"id: e4\ndata: {response_json(tool_result(PAYLOAD))}\n\n",
    )
    assert call_once(handler) == PAYLOAD


def test_sse_multi_line_data_with_crlf_split_across_chunks() -> None:
    body = response_json(tool_result(PAYLOAD))
    half = body.index(',"result"')  # a newline between JSON tokens is whitespace
    event = f"event: message\r\ndata: {body[:half]}\r\ndata: {body[half:]}\r\n\r\n"
    assert call_once(sse_handler(": hello\r\n\r\n", event[:10], event[10:-3], event[-3:])) == PAYLOAD


def test_sse_stream_ending_without_the_response_is_a_transport_error() -> None:
    notification = sse_message({"jsonrpc": "2.0", "method": "notifications/x"})
    handler = sse_handler(": nothing to see\n\n", notification)
    with pytest.raises(CesTransportError, match=r"ended after 1 event\(s\) without a response") as info:
        call_once(handler)
    assert info.value.status_code is None


def test_sse_is_read_as_a_stream_and_left_once_the_response_arrived() -> None:
    handler = sse_handler(f"data: {response_json(tool_result(PAYLOAD))}\n\n", ": still open\n\n", delay=5.0)
    started = time.monotonic()
    assert call_once(handler) == PAYLOAD
    assert time.monotonic() - started < 3.0


def test_silence_longer_than_the_read_timeout_is_a_transport_error() -> None:
    handler = sse_handler(": wait\n\n", f"data: {response_json(tool_result(PAYLOAD))}\n\n", delay=2.0)
    with pytest.raises(CesTransportError, match="timed out"):
        call_once(handler, timeout_seconds=0.3)


def test_connection_refused_is_a_transport_error_saying_nothing_was_sent() -> None:
    with mcp_server(answer({})) as (_, url):
        pass  # the server is gone now
    with client_for(url) as client, pytest.raises(CesTransportError, match="could not connect") as info:
        client.call_tool("list_conversations", {})
    assert info.value.request_sent is False and info.value.status_code is None
    assert "gave up after 5 attempts" in str(info.value)


# -- results -----------------------------------------------------------------------------------


def test_text_only_result_is_parsed_from_concatenated_text_items() -> None:
    text = orjson.dumps(PAYLOAD).decode()
    items = [{"type": "text", "text": text[:5]}, {"type": "image"}, {"type": "text", "text": text[5:]}]
    assert call_once(answer({"content": items})) == PAYLOAD


def test_structured_content_wins_over_text() -> None:
    result = {"content": [{"type": "text", "text": "a summary, not JSON"}], "structuredContent": PAYLOAD}
    assert call_once(answer(result)) == PAYLOAD


@pytest.mark.parametrize(
    ("result", "match"),
    [
        (
            {"content": [{"type": "text", "text": "<html>oops</html>"}]},
            "list_conversations returned text that",
        ),
        ({"content": [{"type": "text", "text": "[1, 2]"}]}, "not an object"),
        ({"content": []}, "neither structuredContent nor text"),
    ],
)
def test_unusable_results_are_protocol_errors_naming_the_tool(result: dict[str, Any], match: str) -> None:
    with pytest.raises(CesProtocolError, match=match):
        call_once(answer(result))


def test_is_error_result_is_a_tool_error_with_the_server_message() -> None:
    result = {"isError": True, "content": [{"type": "text", "text": "Conversation not found: c9"}]}
    with pytest.raises(CesToolError) as info:
        call_once(answer(result), "get_conversation")
    assert info.value.tool == "get_conversation"
    assert info.value.server_message == "Conversation not found: c9"


def test_json_rpc_error_object() -> None:
    def handler(call: Call) -> Response:
        return rpc_error(call, -32602, "Invalid params: pageSize", {"field": "pageSize"})

    with pytest.raises(CesRpcError) as info:
        call_once(handler)
    assert (info.value.code, info.value.server_message, info.value.detail) == (
        -32602,
        "Invalid params: pageSize",
        {"field": "pageSize"},
    )


def test_json_body_answering_another_request_is_a_protocol_error() -> None:
    other = Response(orjson.dumps({"jsonrpc": "2.0", "id": -5, "result": {}}), media_type="application/json")
    with pytest.raises(CesProtocolError, match="no response to request"):
        call_once(reply(other))


@pytest.mark.parametrize(
    ("response", "match"),
    [
        (Response(b"hello", media_type="text/plain"), "unexpected content type 'text/plain'"),
        (Response(status_code=202), "HTTP 202 without a response"),
        (  # another kind of server: CES_MCP_URL set to a REST or health endpoint
            Response(b'{"status": "ok"}', media_type="application/json"),
            re.escape("""JSON but not JSON-RPC (b'{"status": "ok"}'): is CES_MCP_URL the endpoint"""),
        ),
    ],
)
def test_answers_that_are_no_response(response: Response, match: str) -> None:
    with pytest.raises(CesProtocolError, match=match):
        call_once(reply(response))


# -- HTTP errors -------------------------------------------------------------------------------


def google_error(status: int, code: str, message: str, reason: str | None = None, **headers: str) -> Response:
    error: dict[str, Any] = {"code": status, "message": message, "status": code}
    if reason:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]
    body = orjson.dumps({"error": error})
    return Response(body, status_code=status, media_type="application/json", headers=headers)


@pytest.mark.parametrize(
    ("response", "status", "message", "retry_after"),
    [
        (
            google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."),
            401,
            "UNAUTHENTICATED: Request had invalid authentication credentials.",
            None,
        ),
        (
            google_error(403, "PERMISSION_DENIED", "CES API has not been used", "SERVICE_DISABLED"),
            403,
            "PERMISSION_DENIED: CES API has not been used (reason: SERVICE_DISABLED)",
            None,
        ),
        (
            google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", **{"Retry-After": "7"}),
            429,
            "RESOURCE_EXHAUSTED: Quota exceeded",
            7.0,
        ),
        (Response(b"upstream connect error", status_code=500), 500, "upstream connect error", None),
        (  # a front end's error page (a wrong path): its visible text, on one line
            Response(
                b"<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n"
                b"  <title>Error 404 (Not Found)!!1</title>\n  <style>*{margin:0;padding:0}</style>\n"
                b"  <p><b>404.</b> <ins>That&#39;s an error.</ins>\n"
                b"  <p>The requested URL <code>/mcpx</code> was not found on this server.",
                status_code=404,
                media_type="text/html",
            ),
            404,
            "Error 404 (Not Found)!!1 404. That's an error. "
            "The requested URL /mcpx was not found on this server.",
            None,
        ),
    ],
)
def test_http_errors_carry_status_server_message_and_retry_after(
    response: Response, status: int, message: str, retry_after: float | None
) -> None:
    with pytest.raises(CesTransportError) as info:
        call_once(reply(response), max_attempts=1)
    error = info.value
    assert (error.status_code, error.server_message, error.retry_after) == (status, message, retry_after)
    assert f"HTTP {status}" in str(error) and message in str(error)


def test_retry_after_as_http_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    response = Response(b"", status_code=503, headers={"Retry-After": when})
    with pytest.raises(CesTransportError) as info:
        call_once(reply(response), max_attempts=1)
    assert info.value.retry_after is not None and 100 < info.value.retry_after <= 120


def test_json_rpc_error_body_with_http_status() -> None:
    def handler(call: Call) -> Response:
        return rpc_error(call, -32602, "params._meta is malformed", status=400)

    with pytest.raises(CesTransportError) as info:
        call_once(handler)
    assert (info.value.status_code, info.value.rpc_code) == (400, -32602)
    assert info.value.server_message == "params._meta is malformed"


def test_redirects_are_not_followed() -> None:
    response = Response(status_code=307, headers={"location": "https://elsewhere.example/mcp"})
    with (
        mcp_server(reply(response)) as (server, url),
        client_for(url) as client,
        pytest.raises(CesTransportError, match="not followed") as info,
    ):
        client.call_tool("list_conversations", {})
    assert "redirect to 'https://elsewhere.example/mcp'" in str(info.value)
    assert len(server.calls) == 1


# -- secrets -----------------------------------------------------------------------------------


def test_token_never_appears_in_repr_errors_or_debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    def echo_token(call: Call) -> Response:
        if call.tool == "get_conversation":
            return rpc_result(call, tool_result(PAYLOAD))
        return Response(f"rejected credentials {call.headers['authorization']}".encode(), status_code=401)

    caplog.set_level(logging.DEBUG)
    with mcp_server(echo_token) as (_, url), client_for(url, access_token=TOKEN) as client:
        client.call_tool("get_conversation", {"name": "c1"})
        with pytest.raises(CesTransportError) as info:
            client.call_tool("list_conversations", {})
        assert TOKEN not in repr(client)
    assert "rejected credentials Bearer ***" in str(info.value)
    assert TOKEN not in str(info.value) and TOKEN not in (info.value.server_message or "")
    assert any("tools/call get_conversation" in r.getMessage() for r in caplog.records)
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


# -- stats and the retry policy ----------------------------------------------------------------


def test_stats_count_requests_tool_calls_bytes_and_time() -> None:
    with mcp_server(answer(tool_result(PAYLOAD))) as (_, url), client_for(url) as client:
        for _ in range(3):
            client.call_tool("get_conversation", {"name": "c1"})
        client.call_tool("list_conversations", {})
        stats = client.stats
    assert stats.requests == 4
    assert stats.tool_calls == {"get_conversation": 3, "list_conversations": 1}
    assert stats.bytes_received > 4 * len(orjson.dumps(PAYLOAD))
    assert stats.api_seconds > 0
    assert (stats.retries, stats.session_initializations) == (0, 0)


def flaky_then_ok() -> Any:
    failures: set[str] = set()

    def handle(call: Call) -> Response:
        if call.tool not in failures:
            failures.add(call.tool or "")
            return Response(b"try again", status_code=503)
        return rpc_result(call, tool_result(PAYLOAD))

    return handle


def test_every_exchange_goes_through_the_retry_policy() -> None:
    with mcp_server(flaky_then_ok()) as (server, url), client_for(url) as client:
        assert client.call_tool("list_conversations", {}) == PAYLOAD
        with pytest.raises(CesTransportError):
            run_evaluation(client, "projects/p/locations/l/apps/a", evaluations=["e1"])
        stats = client.stats
    assert stats.retries == 1 and stats.requests == 3
    assert [c.tool for c in server.calls] == ["list_conversations", "list_conversations", "run_evaluation"]


def test_policy_never_sends_nothing_twice() -> None:
    with (
        mcp_server(flaky_then_ok()) as (server, url),
        CesMcpClient(
            settings_for(url), rate_limiter=fast_limiter(), retry_policy=RetryPolicy(max_attempts=1)
        ) as client,
        pytest.raises(CesTransportError),
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 1


def test_the_text_copy_of_structured_content_is_not_what_is_returned() -> None:
    """A tools/call result is read from structuredContent: a text copy that disagrees (or is
    not even JSON) changes nothing."""
    result = {"content": [{"type": "text", "text": "{not json"}], "structuredContent": PAYLOAD}
    assert call_once(answer(result)) == PAYLOAD
    assert call_once(sse_handler(f"data: {response_json(result)}\n\n")) == PAYLOAD


# -- proxies -------------------------------------------------------------------------------------


def test_requests_go_through_the_proxy_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY still routes the client's requests (they go straight to the transport the
    client picked for the endpoint), and NO_PROXY still exempts a host."""
    seen: list[tuple[str, str]] = []

    async def proxy(scope: dict[str, Any], receive: Any, send: Any) -> None:
        """An HTTP proxy answering for the MCP server: it gets requests for the server's host."""
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = orjson.loads(body)
        host = dict(scope["headers"])[b"host"].decode()
        seen.append((host + scope["path"], request["params"]["name"]))
        answer = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": tool_result(PAYLOAD)})
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", JSON)]})
        await send({"type": "http.response.body", "body": answer})

    with serve(proxy) as proxy_url:
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with client_for("http://ces.example.test/mcp") as client:
            assert client.call_tool("list_conversations", {}) == PAYLOAD
        assert seen == [("ces.example.test/mcp", "list_conversations")]

        monkeypatch.setenv("NO_PROXY", "ces.example.test")
        with (
            client_for("http://ces.example.test/mcp", max_attempts=1) as client,
            pytest.raises(CesTransportError, match="could not connect"),
        ):
            client.call_tool("list_conversations", {})
        assert len(seen) == 1


@pytest.mark.parametrize("framing", ["json", "sse"])
def test_a_response_larger_than_the_limit_is_an_error_not_gigabytes(framing: str) -> None:
    big = {"conversations": [{"name": "x" * (3 * 2**20)}]}  # a 3 MB page
    body = response_json(tool_result(big, structured=False))
    handler = (
        sse_handler(f"data: {body}\n\n") if framing == "sse" else answer(tool_result(big, structured=False))
    )
    with (
        mcp_server(handler) as (server, url),
        CesMcpClient(settings_for(url, max_response_mb=1), rate_limiter=fast_limiter()) as client,
        pytest.raises(CesProtocolError, match="CES_MAX_RESPONSE_MB"),
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 1  # not retried: the same answer would come again


def test_a_server_that_drips_its_answer_meets_the_request_deadline() -> None:
    """Each byte comes within the read timeout, so only a deadline on the whole exchange ends it."""

    async def drip(call: Call) -> Any:
        for byte in response_json(tool_result(PAYLOAD)).replace("{id}", str(call.id)).encode():
            await asyncio.sleep(0.05)
            yield bytes([byte])

    handler = lambda call: StreamingResponse(drip(call), media_type="application/json")  # noqa: E731
    settings = dict(timeout_seconds=0.5, request_deadline_seconds=1.0, max_attempts=1)
    with (
        mcp_server(handler) as (_, url),
        CesMcpClient(settings_for(url, **settings), rate_limiter=fast_limiter()) as client,
        pytest.raises(CesTransportError, match=r"took longer than 1 s \(CES_REQUEST_DEADLINE_SECONDS\)"),
    ):
        started = time.monotonic()
        client.call_tool("list_conversations", {})
    assert time.monotonic() - started < 3
