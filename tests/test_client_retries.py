"""Retries, in one place: what is sent again, how often, after how long, and what never is.

Each test serves a purpose-built MCP server on loopback (transport faults come from the
simulator's fault middleware wrapped around it) and counts what reached the wire.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from typing import Any

import orjson
import pytest
from client_fixtures import (
    Call,
    McpServer,
    fast_limiter,
    mcp_server,
    rpc_result,
    serve,
    settings_for,
    sse_message,
    sse_response,
    tool_result,
)
from starlette.responses import Response

from pipelines.ces.client import CesMcpClient, RetryPolicy
from pipelines.ces.errors import CesMalformedResponseError, CesToolError, CesTransportError
from pipelines.ces.retry import is_transient, may_resend
from pipelines.ces.simulator.server.faults import SimulatedFaults
from pipelines.ces.tools import run_evaluation

PAYLOAD = {"conversations": [{"name": "c1"}]}
APP = "projects/p/locations/l/apps/a"


def ok(call: Call) -> Response:
    return rpc_result(call, tool_result(PAYLOAD))


def ok_as_sse(call: Call) -> Response:
    """The same answer as an event stream: a notification first, then the response."""
    notification = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "working"}}
    response = {"jsonrpc": "2.0", "id": call.id, "result": tool_result(PAYLOAD)}
    return sse_response([sse_message(notification), sse_message(response)])


def answering_in(spec: str) -> Any:
    """The handler a fault spec needs: `cut-sse` cuts event streams only."""
    return ok_as_sse if spec.startswith("cut-sse") else ok


def failing(times: int, response: Any, then: Any = ok) -> Any:
    """A handler answering `response(call)` to the first `times` requests, then `then(call)`."""
    count = 0
    lock = threading.Lock()

    def handle(call: Call) -> Response:
        nonlocal count
        with lock:
            count += 1
            failed = count <= times
        return response(call) if failed else then(call)

    return handle


def client_for(url: str, *, sleeps: list[float] | None = None, **settings: Any) -> CesMcpClient:
    """A client whose retry waits are recorded (and skipped) when `sleeps` is given."""
    policy = None
    if sleeps is not None:
        base = settings_for(url, **settings)
        policy = RetryPolicy(
            max_attempts=base.max_attempts,
            max_seconds=base.retry_max_seconds,
            initial_backoff_seconds=base.retry_backoff_seconds,
            quota_seconds=base.quota_retry_seconds,
            rng=random.Random(7),
            sleep=sleeps.append,
            clock=lambda: sum(sleeps),  # time passes only by the recorded waits
        )
    return CesMcpClient(settings_for(url, **settings), rate_limiter=fast_limiter(), retry_policy=policy)


def status(code: int, **headers: str) -> Any:
    return lambda call: Response(b'{"error": {"message": "busy"}}', status_code=code, headers=headers)


# -- what is transient ---------------------------------------------------------------------------


@pytest.mark.parametrize("code", [429, 500, 502, 503, 504])
def test_idempotent_calls_are_retried_on_transient_statuses_and_each_retry_is_counted(code: int) -> None:
    with mcp_server(failing(2, status(code))) as (server, url), client_for(url) as client:
        assert client.call_tool("list_conversations", {"parent": APP}) == PAYLOAD
        assert client.call_tool("get_conversation", {"name": "c1"}) == PAYLOAD
        stats = client.stats
    assert [c.tool for c in server.calls] == ["list_conversations"] * 3 + ["get_conversation"]
    assert (stats.retries, stats.requests, stats.tool_calls["list_conversations"]) == (2, 4, 1)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (400, "INVALID_ARGUMENT: filter is malformed"),
        (403, "PERMISSION_DENIED: caller lacks ces.conversations.list"),
    ],
)
def test_400_and_403_fail_at_once_with_the_server_message(code: int, message: str) -> None:
    status_name, text = message.split(": ", 1)
    body = f'{{"error": {{"code": {code}, "status": "{status_name}", "message": "{text}"}}}}'
    response = Response(body.encode(), status_code=code, media_type="application/json")
    with (
        mcp_server(lambda call: response) as (server, url),
        client_for(url) as client,
        pytest.raises(CesTransportError) as info,
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 1 and client.stats.retries == 0
    assert info.value.status_code == code and info.value.server_message == message
    assert message in str(info.value) and "gave up" not in str(info.value)


def test_tool_errors_are_not_retried() -> None:
    refused = {"isError": True, "content": [{"type": "text", "text": "NOT_FOUND: conversation c9"}]}
    with (
        mcp_server(lambda call: rpc_result(call, refused)) as (server, url),
        client_for(url) as client,
        pytest.raises(CesToolError, match="NOT_FOUND"),
    ):
        client.call_tool("get_conversation", {"name": "c9"})
    assert len(server.calls) == 1


def tool_failure(status: str) -> Any:
    result = {"isError": True, "content": [{"type": "text", "text": f"{status}: the backend is busy"}]}
    return lambda call: rpc_result(call, result)


@pytest.mark.parametrize(
    "status", ["UNAVAILABLE", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "ABORTED", "INTERNAL"]
)
def test_tool_results_failing_transiently_are_retried(status: str) -> None:
    with mcp_server(failing(2, tool_failure(status))) as (server, url), client_for(url) as client:
        assert client.call_tool("get_conversation", {"name": "c1"}) == PAYLOAD
        assert client.stats.retries == 2
    with (
        mcp_server(failing(1, tool_failure(status))) as (server, url),
        client_for(url) as client,
        pytest.raises(CesToolError, match=status),
    ):
        run_evaluation(client, APP, evaluations=["e1"])
    assert len(server.calls) == 1


def failed_tool(text: str, structured: dict[str, Any] | None = None) -> Any:
    result: dict[str, Any] = {"isError": True, "content": [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = structured
    return lambda call: rpc_result(call, result)


def rpc_failure(message: str, data: Any = None) -> Any:
    error: dict[str, Any] = {"code": -32603, "message": message}
    if data is not None:
        error["data"] = data
    return lambda call: Response(
        orjson.dumps({"jsonrpc": "2.0", "id": call.id, "error": error}), media_type="application/json"
    )


def google_error(code: int, status: str, *details: dict[str, Any]) -> Any:
    body = {"error": {"code": code, "status": status, "message": "slow down", "details": list(details)}}
    return lambda call: Response(orjson.dumps(body), status_code=code, media_type="application/json")


RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3.5s"}
RATE_LIMITED = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED"}


@pytest.mark.parametrize(
    "failure",
    [
        failed_tool('{"code": 14, "message": "the backend is down", "details": []}'),  # a Status as JSON text
        failed_tool("quota", {"error": {"code": 8, "message": "per-minute quota"}}),  # in structuredContent
        rpc_failure("UNAVAILABLE: try again later"),  # a JSON-RPC error's message
        rpc_failure("Internal error", {"code": 10, "status": "ABORTED", "message": "contention"}),  # its data
        google_error(403, "PERMISSION_DENIED", RATE_LIMITED),  # Google's 403 for a rate limit
    ],
    ids=["status-json-text", "structured-content", "rpc-message", "rpc-data", "403-rate-limit"],
)
def test_google_error_shapes_are_read_wherever_they_come(failure: Any) -> None:
    sleeps: list[float] = []
    with mcp_server(failing(2, failure)) as (server, url), client_for(url, sleeps=sleeps) as client:
        assert client.call_tool("list_conversations", {"parent": APP}) == PAYLOAD
    assert len(server.calls) == 3 and len(sleeps) == 2


def test_a_spent_quota_is_waited_out_for_more_than_a_minute_whatever_the_attempts() -> None:
    sleeps: list[float] = []
    with (
        mcp_server(google_error(429, "RESOURCE_EXHAUSTED")) as (server, url),
        client_for(url, sleeps=sleeps, max_attempts=3, retry_backoff_seconds=0.5) as client,
        pytest.raises(
            CesTransportError, match=r"quota stayed exhausted past the 90 s .*CES_QUOTA_RETRY_SECONDS"
        ),
    ):
        client.call_tool("list_conversations", {})
    assert 60 <= sum(sleeps) <= 90 and len(server.calls) > 3
    ceilings = [min(30.0, 0.5 * 2 ** (n - 1)) for n in range(1, len(sleeps) + 1)]  # backoff 0.5 s
    assert all(c / 2 <= s <= c for s, c in zip(sleeps, ceilings, strict=True))  # equal jitter


@pytest.mark.parametrize("spec", ["reset:1", "cut-sse:1", "bad-json:1"])
def test_resets_cut_streams_and_garbled_bodies_are_retried(spec: str) -> None:
    server = McpServer(answering_in(spec))
    faults = SimulatedFaults(f"{spec},limit=2")
    with serve(faults(server.app())) as base, client_for(f"{base}/mcp") as client:
        assert client.call_tool("list_conversations", {}) == PAYLOAD
        stats = client.stats
    assert sum(faults.injected.values()) == 2 == stats.retries
    assert stats.requests == 3


def test_a_response_slower_than_the_timeout_is_retried() -> None:
    server = McpServer(ok)
    faults = SimulatedFaults("slow:1,limit=1,slow-seconds=3")
    started = time.monotonic()
    with serve(faults(server.app())) as base, client_for(f"{base}/mcp", timeout_seconds=0.3) as client:
        assert client.call_tool("get_conversation", {"name": "c1"}) == PAYLOAD
        assert client.stats.retries == 1
    assert time.monotonic() - started < 2.5
    assert len(server.calls) == 1  # the slow attempt never reached the app: the client had left


def test_an_sse_stream_ending_before_the_response_is_retried() -> None:
    notification = sse_message({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
    with (
        mcp_server(failing(1, lambda call: sse_response([notification]))) as (server, url),
        client_for(url) as client,
    ):
        assert client.call_tool("list_conversations", {}) == PAYLOAD
        assert client.stats.retries == 1
    assert len(server.calls) == 2


def test_tools_list_is_retried() -> None:
    def tools(call: Call) -> Response:
        return rpc_result(call, {"tools": [{"name": "list_conversations", "inputSchema": {}}]})

    with mcp_server(failing(1, status(502), then=tools)) as (server, url), client_for(url) as client:
        assert client.has_tool("list_conversations")
        assert client.stats.retries == 1
    assert [c.method for c in server.calls] == ["tools/list", "tools/list"]


# -- when to stop ------------------------------------------------------------------------------


def test_attempts_are_bounded_and_the_error_says_so() -> None:
    sleeps: list[float] = []
    with (
        mcp_server(status(503)) as (server, url),
        client_for(url, sleeps=sleeps, max_attempts=3) as client,
        pytest.raises(CesTransportError, match=r"HTTP 503 .*gave up after 3 attempts") as info,
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 3 and len(sleeps) == 2 and info.value.attempts == 3
    assert client.stats.retries == 2


def test_backoff_is_exponential_with_full_jitter() -> None:
    sleeps: list[float] = []
    with (
        mcp_server(status(500)) as (_, url),
        client_for(url, sleeps=sleeps, max_attempts=6, retry_backoff_seconds=1.0) as client,
        pytest.raises(CesTransportError),
    ):
        client.call_tool("list_conversations", {})
    assert len(sleeps) == 5
    for attempt, delay in enumerate(sleeps, start=1):
        assert 0.0 <= delay <= min(30.0, 2 ** (attempt - 1)), (attempt, delay)
    assert len(set(sleeps)) == 5  # jittered, not fixed
    policy = RetryPolicy(initial_backoff_seconds=1.0, rng=random.Random(1))
    ceilings = [max(policy.backoff(attempt) for _ in range(400)) for attempt in (1, 3, 6, 9)]
    assert 0.9 < ceilings[0] <= 1.0 and 3.6 < ceilings[1] <= 4.0 and 27 < ceilings[2] <= 30.0
    assert ceilings[3] <= 30.0  # capped


@pytest.mark.parametrize(
    ("failure", "delay"),
    [
        (status(429, **{"Retry-After": "7"}), 7.0),
        # A RetryInfo in the body counts without a Retry-After header.
        (google_error(503, "UNAVAILABLE", RETRY_INFO), 3.5),
    ],
)
def test_the_delay_the_server_asks_for_is_honoured(failure: Any, delay: float) -> None:
    sleeps: list[float] = []
    with mcp_server(failing(2, failure)) as (_, url), client_for(url, sleeps=sleeps) as client:
        client.call_tool("list_conversations", {})
    assert sleeps == [delay, delay]


def test_a_retry_after_given_as_an_http_date_is_the_time_until_then() -> None:
    """RFC 9110 allows Retry-After as an HTTP date as well as seconds: the wait is until then."""
    when = email.utils.formatdate(time.time() + 8, usegmt=True)  # whole seconds: 7 to 8 s ahead
    sleeps: list[float] = []
    with (
        mcp_server(failing(1, status(503, **{"Retry-After": when}))) as (_, url),
        client_for(url, sleeps=sleeps) as client,
    ):
        client.call_tool("list_conversations", {})
    assert len(sleeps) == 1 and 6.0 < sleeps[0] <= 8.0, sleeps


def test_a_retry_after_beyond_the_time_budget_ends_retrying_at_once() -> None:
    sleeps: list[float] = []
    with (
        mcp_server(status(503, **{"Retry-After": "600"})) as (server, url),
        client_for(url, sleeps=sleeps, retry_max_seconds=120) as client,
        pytest.raises(CesTransportError, match=r"120 s retry budget; the server asked to wait 600 s"),
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 1 and sleeps == []


def test_total_time_is_bounded() -> None:
    with (
        mcp_server(status(503)) as (server, url),
        client_for(url, max_attempts=100, retry_backoff_seconds=0.05, retry_max_seconds=0.6) as client,
        pytest.raises(CesTransportError, match="retry budget"),
    ):
        started = time.monotonic()
        client.call_tool("list_conversations", {})
    assert time.monotonic() - started < 1.5
    assert 2 <= len(server.calls) < 100


# -- run_evaluation is never sent twice once it may have arrived ----------------------------------


@pytest.mark.parametrize("response", [status(503), status(429, **{"Retry-After": "0"}), status(500)])
def test_run_evaluation_is_not_resent_after_a_transient_status(response: Any) -> None:
    with (
        mcp_server(failing(1, response)) as (server, url),
        client_for(url) as client,
        pytest.raises(CesTransportError),
    ):
        run_evaluation(client, APP, evaluations=["e1"])
    assert [c.tool for c in server.calls] == ["run_evaluation"] and client.stats.retries == 0


@pytest.mark.parametrize("spec", ["reset:1", "cut-sse:1", "bad-json:1"])
def test_run_evaluation_is_not_resent_after_a_broken_exchange(spec: str) -> None:
    server = McpServer(answering_in(spec))
    faults = SimulatedFaults(f"{spec},limit=1")
    with (
        serve(faults(server.app())) as base,
        client_for(f"{base}/mcp") as client,
        pytest.raises((CesTransportError, CesMalformedResponseError)),
    ):
        run_evaluation(client, APP, evaluations=["e1"])
    assert client.stats.requests == 1 and client.stats.retries == 0
    assert sum(faults.injected.values()) == 1


def test_run_evaluation_is_not_resent_after_a_timeout() -> None:
    server = McpServer(ok)
    faults = SimulatedFaults("slow:1,limit=1,slow-seconds=2")
    with (
        serve(faults(server.app())) as base,
        client_for(f"{base}/mcp", timeout_seconds=0.3) as client,
        pytest.raises(CesTransportError, match="timed out"),
    ):
        run_evaluation(client, APP, evaluations=["e1"])
    assert client.stats.requests == 1 and client.stats.retries == 0


def test_run_evaluation_is_resent_when_the_connection_could_not_even_be_opened() -> None:
    with mcp_server(ok) as (_, url):
        pass  # nothing listens there any more: no request can have arrived
    with (
        client_for(url, max_attempts=3) as client,
        pytest.raises(CesTransportError, match="could not connect"),
    ):
        run_evaluation(client, APP, evaluations=["e1"])
    assert client.stats.retries == 2


def test_the_rules_in_one_table() -> None:
    refused = CesTransportError("x", request_sent=False)
    cut = CesTransportError("x")
    assert may_resend(refused, idempotent=False) and may_resend(cut, idempotent=True)
    assert not may_resend(cut, idempotent=False)
    for code, transient in [(400, False), (401, False), (403, False), (404, False), (429, True), (504, True)]:
        assert is_transient(CesTransportError("x", status_code=code)) is transient
    assert is_transient(CesMalformedResponseError("x"))
    assert is_transient(CesToolError("get_x", "UNAVAILABLE: try later"))
    assert not is_transient(CesToolError("get_x", "NOT_FOUND: no such thing"))
    assert not may_resend(CesToolError("run_evaluation", "UNAVAILABLE: x"), idempotent=False)


# -- credentials and sessions --------------------------------------------------------------------


class RotatingTokens:
    """A refreshable provider: each `force_refresh` of the current token hands out the next one."""

    can_refresh = True

    def __init__(self) -> None:
        self.current = "token-1"
        self.refreshes = 0

    def token(self) -> str:
        return self.current

    def quota_project(self) -> None:
        return None

    def force_refresh(self, rejected_token: str | None = None) -> None:
        if rejected_token in (None, self.current):
            self.refreshes += 1
            self.current = f"token-{self.refreshes + 1}"


def accepting(token: str) -> Any:
    def handle(call: Call) -> Response:
        if call.headers.get("authorization") != f"Bearer {token}":
            return Response(b'{"error": {"message": "Request had invalid authentication credentials."}}', 401)
        return ok(call)

    return handle


@pytest.mark.parametrize("tool", ["list_conversations", "run_evaluation"])
def test_a_401_renews_the_token_once_and_sends_again(tool: str) -> None:
    tokens = RotatingTokens()
    with mcp_server(accepting("token-2")) as (server, url):
        settings = settings_for(url)
        with CesMcpClient(settings, rate_limiter=fast_limiter(), token_provider=tokens) as client:
            client.call_tool(tool, {})
            client.call_tool(tool, {})
            stats = client.stats
    assert [c.headers["authorization"] for c in server.calls] == [
        "Bearer token-1",
        "Bearer token-2",
        "Bearer token-2",
    ]
    assert tokens.refreshes == 1 and stats.credential_refreshes == 1 and stats.retries == 0


def test_a_second_401_is_final() -> None:
    tokens = RotatingTokens()
    with (
        mcp_server(accepting("never")) as (server, url),
        CesMcpClient(settings_for(url), rate_limiter=fast_limiter(), token_provider=tokens) as client,
        pytest.raises(CesTransportError, match="invalid authentication credentials") as info,
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 2 and tokens.refreshes == 1 and info.value.status_code == 401


def test_a_static_token_refused_is_final_at_once() -> None:
    with (
        mcp_server(accepting("other")) as (server, url),
        client_for(url, access_token="static-token") as client,
        pytest.raises(CesTransportError) as info,
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 1 and info.value.status_code == 401
    said = str(info.value)
    assert "CES refused the credentials" in said and "static-token" not in said
    assert "CES_ACCESS_TOKEN" in said and "gcloud auth application-default login" in said


def test_a_401_without_credentials_says_none_were_sent_and_how_to_give_them() -> None:
    with (
        mcp_server(accepting("other")) as (_server, url),
        client_for(url) as client,
        pytest.raises(CesTransportError) as info,
    ):
        client.call_tool("list_conversations", {})
    said = str(info.value)
    assert "no credentials were sent" in said and "CES_ACCESS_TOKEN" in said


def test_an_expired_session_is_reopened_under_faults() -> None:
    """A session server that forgets its session mid-way, behind transient faults."""
    from test_client_session import PAYLOAD as SESSION_PAYLOAD
    from test_client_session import SessionServer

    session_server = SessionServer()
    server = McpServer(session_server)
    faults = SimulatedFaults("503:0.3,seed=3,limit=1")
    with serve(faults(server.app())) as base, client_for(f"{base}/mcp") as client:
        for index in range(6):
            if index == 3:
                session_server.sessions.clear()  # the server expires every session
            assert client.call_tool("get_conversation", {"name": f"c{index}"}) == SESSION_PAYLOAD
        stats = client.stats
    assert stats.session_initializations == 2
    assert stats.retries == faults.injected["503"] > 0


def test_one_attempt_means_no_retry_even_for_a_spent_quota() -> None:
    sleeps: list[float] = []
    with (
        mcp_server(google_error(429, "RESOURCE_EXHAUSTED")) as (server, url),
        client_for(url, sleeps=sleeps, max_attempts=1) as client,
        pytest.raises(CesTransportError, match="HTTP 429"),
    ):
        client.call_tool("list_conversations", {})
    assert len(server.calls) == 1 and sleeps == []
