"""Helpers for the simulator tests: a raw MCP-over-HTTP caller (httpx, no project client), SSE
decoding, and strict proto checks against the published google-cloud-ces types."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
from google.cloud import ces_v1, ces_v1beta
from google.longrunning import operations_pb2
from google.protobuf import json_format
from google.protobuf.message import Message

ACCEPT_BOTH = "application/json, text/event-stream"
MODERN_VERSION = "2026-07-28"

# Documented by the reference but absent from google-cloud-ces 0.7.2, by exact path.
UNPUBLISHED_CHUNK_FIELDS = {
    "toolCall": ("parentToolCallId", "agentName", "targetApp"),
    "toolResponse": ("parentToolCallId", "agentName", "targetApp"),
    "image": ("altText",),
}
UNPUBLISHED_TURN_FIELDS = ("userIntendedText",)


def sse_events(body: str) -> list[tuple[str, str]]:
    """(event name, data) per event, by the SSE rules: comments skipped, `data:` lines joined by newlines."""
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            events.append((name, "\n".join(data)))
    return events


def messages_of(response: httpx.Response) -> list[dict[str, Any]]:
    """Every JSON-RPC message in a response body, whether application/json or text/event-stream."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        return [orjson.loads(data) for _, data in sse_events(response.text)]
    assert content_type.startswith("application/json"), content_type
    return [response.json()]


class McpHttp:
    """Minimal MCP caller over plain HTTP, in the handshake-free style of the CES docs' curl example."""

    def __init__(self, url: str, headers: dict[str, str] | None = None):
        self.url = url
        self.http = httpx.Client(timeout=30, headers={"accept": ACCEPT_BOTH, **(headers or {})})
        self._ids = itertools.count(1)

    def close(self) -> None:
        self.http.close()

    def post(self, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None) -> httpx.Response:
        content = body if isinstance(body, bytes) else orjson.dumps(body)
        return self.http.post(
            self.url, content=content, headers={"content-type": "application/json", **(headers or {})}
        )

    def request(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            body["params"] = params
        return self.post(body, **kwargs)

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The `result` of a successful request (the last message of the body is the response)."""
        response = self.request(method, params)
        assert response.status_code == 200, response.text
        reply = messages_of(response)[-1]
        assert "result" in reply, reply
        return reply["result"]

    def tool_result(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return self.rpc("tools/call", {"name": tool, "arguments": arguments})

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured result of a tool call that must succeed (and whose text must say the same)."""
        result = self.tool_result(tool, **arguments)
        assert not result.get("isError"), result
        structured = result["structuredContent"]
        assert orjson.loads(result["content"][0]["text"]) == structured
        return structured

    def call_error(self, tool: str, **arguments: Any) -> str:
        """The text of a tool call that must fail at tool level (`isError: true`)."""
        result = self.tool_result(tool, **arguments)
        assert result.get("isError") is True, result
        return result["content"][0]["text"]

    def pages(self, tool: str, **arguments: Any) -> Iterator[dict[str, Any]]:
        """Every page of a list tool, following nextPageToken until it is absent."""
        token = None
        for _ in range(10_000):
            page = self.call(tool, **arguments, **({"pageToken": token} if token else {}))
            yield page
            token = page.get("nextPageToken")
            if token is None:
                return
        raise AssertionError(f"{tool} did not finish paging")

    def all_items(self, tool: str, field: str, **arguments: Any) -> list[dict[str, Any]]:
        return [item for page in self.pages(tool, **arguments) for item in page.get(field, [])]


def strip_unpublished(conversation: dict[str, Any]) -> tuple[dict[str, Any], Counter[str]]:
    """A deep copy without the five fields 0.7.2 lacks (at their exact paths), and how many were removed."""
    copy = orjson.loads(orjson.dumps(conversation))
    removed: Counter[str] = Counter()

    def strip_messages(messages: list[dict[str, Any]]) -> None:
        for message in messages:
            for chunk in message.get("chunks") or []:
                for kind, fields in UNPUBLISHED_CHUNK_FIELDS.items():
                    for field in fields:
                        if field in (chunk.get(kind) or {}):
                            del chunk[kind][field]
                            removed[f"{kind}.{field}"] += 1

    for turn in copy.get("turns") or []:
        for field in UNPUBLISHED_TURN_FIELDS:
            if field in turn:
                del turn[field]
                removed[f"turn.{field}"] += 1
        strip_messages(turn.get("messages") or [])
    strip_messages(copy.get("messages") or [])
    return copy, removed


def parse_strictly(obj: dict[str, Any], message: Message) -> Message:
    """ParseDict with unknown fields refused; then the canonical re-serialisation must equal the input,
    which proves proto3 JSON as Google prints it (defaults omitted, 0/3/6/9 fractional digits, enum names)."""
    json_format.ParseDict(obj, message, ignore_unknown_fields=False)
    assert json_format.MessageToDict(message) == obj
    return message


def parse_conversation(obj: dict[str, Any]) -> Message:
    return parse_strictly(obj, ces_v1.types.Conversation.pb(ces_v1.types.Conversation()))


def parse_evaluation_run(obj: dict[str, Any]) -> Message:
    return parse_strictly(obj, ces_v1beta.types.EvaluationRun.pb(ces_v1beta.types.EvaluationRun()))


def parse_evaluation_result(obj: dict[str, Any]) -> Message:
    return parse_strictly(obj, ces_v1beta.types.EvaluationResult.pb(ces_v1beta.types.EvaluationResult()))


def parse_operation(obj: dict[str, Any]) -> operations_pb2.Operation:
    message = operations_pb2.Operation()
    parse_strictly(obj, message)
    return message
