"""Tool discovery and the thin typed wrappers: what each sends and what it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from client_fixtures import Call, ToolServer, fast_limiter, mcp_server, rpc_result, settings_for
from starlette.responses import Response

from pipelines.ces import tools
from pipelines.ces.client import CesMcpClient, RetryPolicy
from pipelines.ces.errors import CesError, CesPagingError

T = TypeVar("T")
APP = "projects/p/locations/us/apps/a"
RUNS = [{"name": f"{APP}/evaluationRuns/r{i}", "state": "COMPLETED"} for i in range(5)]


def paged(items: list[dict[str, Any]], key: str, size: int) -> Any:
    """A list tool over `items`, `size` per page, tokens being offsets."""

    def page(arguments: dict[str, Any]) -> dict[str, Any]:
        offset = int(arguments.get("pageToken") or 0)
        result: dict[str, Any] = {key: items[offset : offset + size]}
        if offset + size < len(items):
            result["nextPageToken"] = str(offset + size)
        return result

    return page


def echo(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"echo": arguments}


SERVER = ToolServer(
    {
        "list_evaluation_runs": paged(RUNS, "evaluationRuns", 2),
        "list_evaluation_results": paged([{"name": "res1"}, {"name": "res2"}], "evaluationResults", 1),
        "get_evaluation_run": echo,
        "get_conversation": echo,
        "run_evaluation": echo,
        "get_operation": echo,
    }
)


def client_for(url: str, **kwargs: Any) -> CesMcpClient:
    return CesMcpClient(settings_for(url), rate_limiter=fast_limiter(), **kwargs)


def test_evaluation_runs_are_paged() -> None:
    with mcp_server(SERVER) as (server, url), client_for(url) as client:
        records = list(tools.iter_evaluation_run_records(client, APP, page_size=2))
    assert [run for r in records for run in r.result.get("evaluationRuns", [])] == RUNS
    assert [r.arguments for r in records] == [
        {"parent": APP, "pageSize": 2, "orderBy": "create_time desc"},
        {"parent": APP, "pageSize": 2, "orderBy": "create_time desc", "pageToken": "2"},
        {"parent": APP, "pageSize": 2, "orderBy": "create_time desc", "pageToken": "4"},
    ]
    assert len(server.tool_calls("list_evaluation_runs")) == 3


def test_evaluation_results_of_one_run() -> None:
    run = RUNS[0]["name"]
    with mcp_server(SERVER) as (server, url), client_for(url) as client:
        records = list(tools.iter_evaluation_result_records(client, APP, run, page_size=1))
    assert [item for r in records for item in r.result.get("evaluationResults", [])] == [
        {"name": "res1"},
        {"name": "res2"},
    ]
    first = server.tool_calls("list_evaluation_results")[0].arguments
    assert first == {"parent": f"{APP}/evaluations/-", "pageSize": 1, "filter": f'evaluation_run = "{run}"'}


def test_get_operation_sends_the_name() -> None:
    with mcp_server(SERVER) as (_, url), client_for(url) as client:
        assert tools.get_operation(client, "o") == {"echo": {"name": "o"}}


@dataclass(frozen=True)
class Recorder(RetryPolicy):
    """Never retries; remembers whether each failed call was idempotent."""

    max_attempts: int = 1
    idempotent: list[bool] = field(default_factory=list)

    def run(self, attempt: Callable[[], T], *, idempotent: bool, label: str, on_retry: Any = None) -> T:
        try:
            return super().run(attempt, idempotent=idempotent, label=label, on_retry=on_retry)
        except CesError:
            self.idempotent.append(idempotent)
            raise


def test_run_evaluation_sends_only_the_given_fields() -> None:
    with mcp_server(SERVER) as (server, url), client_for(url) as client:
        tools.run_evaluation(client, APP, evaluations=("e1", "e2"), display_name="nightly")
        tools.run_evaluation(client, APP, evaluation_dataset="d1", app_version=f"{APP}/versions/v3")
    sent = [call.arguments for call in server.tool_calls("run_evaluation")]
    assert sent == [
        {"app": APP, "evaluations": ["e1", "e2"], "displayName": "nightly"},
        {"app": APP, "evaluationDataset": "d1", "appVersion": f"{APP}/versions/v3"},
    ]


def listing(pages: dict[str | None, dict[str, Any]]) -> Any:
    def handle(call: Call) -> Response:
        if call.method == "tools/list":
            return rpc_result(call, pages[call.params.get("cursor")])
        return Response(b"down", status_code=503)

    return handle


def test_list_tools_follows_cursors_and_names_are_cached() -> None:
    pages = {
        None: {"tools": [{"name": "list_conversations"}], "nextCursor": "c2"},
        "c2": {"tools": [{"name": "get_conversation"}, {"name": "list_evaluation_results"}]},
    }
    with mcp_server(listing(pages)) as (server, url), client_for(url) as client:
        assert client.has_tool("list_evaluation_results")
        assert not client.has_tool("delete_app")
        assert client.has_tool("list_conversations") and client.has_tool("get_conversation")
    assert [call.params.get("cursor") for call in server.calls] == [None, "c2"]


def test_list_tools_with_a_repeated_cursor_is_a_paging_error() -> None:
    pages = {None: {"tools": [], "nextCursor": "x"}, "x": {"tools": [], "nextCursor": "x"}}
    with mcp_server(listing(pages)) as (_, url), client_for(url) as client, pytest.raises(CesPagingError):
        client.list_tools()


def test_idempotency_comes_from_annotations_then_from_the_naming_convention() -> None:
    annotated = {
        None: {
            "tools": [
                {"name": "get_fresh_token", "annotations": {"idempotentHint": False}},
                {"name": "rebuild_index", "annotations": {"idempotentHint": True}},
            ]
        }
    }
    recorder = Recorder()
    with mcp_server(listing(annotated)) as (_, url), client_for(url, retry_policy=recorder) as client:
        for name in ("list_conversations", "run_evaluation"):  # before listing: by name
            with pytest.raises(CesError):
                client.call_tool(name, {})
        client.list_tools()
        for name in ("get_fresh_token", "rebuild_index", "get_conversation"):
            with pytest.raises(CesError):
                client.call_tool(name, {})
    assert recorder.idempotent == [True, False, False, True, True]
