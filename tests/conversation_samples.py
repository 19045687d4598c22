"""Hand-written Conversation JSON for unit tests, one field of every kind, values known."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from pipelines.transform.conversations import ConversationFlattener
from pipelines.transform.rejects import Reject

APP = "projects/p1/locations/us/apps/support"


def conversation_name(conversation_id: str, app: str = APP) -> str:
    return f"{app}/conversations/{conversation_id}"


def full_conversation(conversation_id: str = "c1", start: str = "2026-11-01T10:00:00Z") -> dict[str, Any]:
    """A conversation with two turns using every chunk kind, a 3-level trace and legacy messages."""
    tool = f"{APP}/tools/lookup_order"
    toolset = f"{APP}/toolsets/crm"
    return {
        "name": conversation_name(conversation_id),
        "startTime": start,
        "endTime": "2026-11-01T10:02:30.250+00:00",
        "turnCount": 2,
        "channelType": "AUDIO",
        "source": "LIVE",
        "inputTypes": ["INPUT_TYPE_AUDIO", "INPUT_TYPE_TEXT"],
        "entryAgent": f"{APP}/agents/root",
        "deployment": f"{APP}/deployments/prod",
        "appVersion": f"{APP}/versions/7",
        "languageCode": "en-US",
        "someFutureField": {"ignored": True},
        "turns": [
            {
                "userIntendedText": "where is my order",
                "messages": [
                    {
                        "role": "user",
                        "eventTime": "2026-11-01T10:00:01.5Z",
                        "chunks": [
                            {"transcript": "where is my order"},
                            {"blob": {"mimeType": "audio/wav", "data": base64.b64encode(b"12345").decode()}},
                        ],
                    },
                    {
                        "role": "agent",
                        "eventTime": "2026-11-01T10:00:03.123456789Z",
                        "chunks": [
                            {
                                "toolCall": {
                                    "id": "call-1",
                                    "tool": tool,
                                    "displayName": "Lookup",
                                    "args": {"id": 42},
                                }
                            },
                            {
                                "toolResponse": {
                                    "id": "call-1",
                                    "tool": tool,
                                    "displayName": "Lookup",
                                    "response": {"output": {"status": "shipped"}},
                                }
                            },
                            {
                                "toolCall": {
                                    "id": "call-2",
                                    "toolsetTool": {"toolset": toolset, "toolId": "get_customer"},
                                    "args": {},
                                    "parentToolCallId": "call-1",
                                    "agentName": "Billing Agent",
                                    "targetApp": "PROJECT",
                                }
                            },
                            {
                                "toolResponse": {
                                    "id": "call-2",
                                    "toolsetTool": {"toolset": toolset, "toolId": "get_customer"},
                                    "response": {"error": "timeout"},
                                    "parentToolCallId": "call-1",
                                    "agentName": "Billing Agent",
                                }
                            },
                            {"text": "It has shipped."},
                        ],
                    },
                ],
                "rootSpan": {
                    "name": "Turn",
                    "startTime": "2026-11-01T10:00:01Z",
                    "endTime": "2026-11-01T10:00:04Z",
                    "duration": "2.999s",
                    "attributes": {"perceived latency (ms)": 1200, "input types": ["audio"]},
                    "childSpans": [
                        {
                            "name": "LLM",
                            "startTime": "2026-11-01T10:00:01.1Z",
                            "endTime": "2026-11-01T10:00:02Z",
                            "duration": "0.9s",
                            "attributes": {"model": "gemini-2.5-flash", "input token count": 812},
                            "childSpans": [
                                {
                                    "name": "Tool",
                                    "startTime": "2026-11-01T10:00:01.2Z",
                                    "duration": "0.000000001s",
                                    "attributes": {"name": "lookup_order"},
                                }
                            ],
                        },
                        {"name": "TTS", "duration": "0.25s"},
                    ],
                },
            },
            {
                "messages": [
                    {
                        "role": "user",
                        "chunks": [{"image": {"mimeType": "image/png", "data": "AAEC", "altText": "a"}}],
                    },
                    {"role": "agent", "chunks": [{"payload": {"card": {"title": "Order"}}}]},
                    {
                        "role": "agent",
                        "chunks": [
                            {
                                "agentTransfer": {
                                    "targetAgent": f"{APP}/agents/billing",
                                    "displayName": "Billing",
                                }
                            },
                            {"updatedVariables": {"order_id": "42"}},
                            {"defaultVariables": {"tier": "gold"}},
                            {"hologram": {"frames": 3}},
                            {},
                        ],
                    },
                ],
            },
        ],
        "messages": [
            {
                "role": "user",
                "chunks": [{"text": "legacy hello"}, {"toolCall": {"id": "legacy-call", "tool": tool}}],
            }
        ],
    }


def legacy_conversation(conversation_id: str = "c0", start: str = "2026-11-01T09:00:00Z") -> dict[str, Any]:
    """A conversation from before turns: only the deprecated top-level messages."""
    legacy = full_conversation(conversation_id, start)
    del legacy["turns"]
    return legacy


def with_changes(conversation: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A deep copy of `conversation` with the value at `path` replaced."""
    changed = copy.deepcopy(conversation)
    target = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return changed


def flatten_conversations(conversations: Iterable[Any]) -> tuple[dict[str, pa.Table], list[Reject]]:
    """Every table of these conversations (one flattener, one batch each) and the rejects."""
    flattener = ConversationFlattener()
    for conversation in conversations:
        flattener.add(conversation)
    batches = flattener.take_batches()
    return {name: pa.Table.from_batches([batch]) for name, batch in batches.items()}, flattener.take_rejects()
