"""Raw-lake lines read back as the flattener's records: each listed conversation with its own
text, its typed decode, or the reason it has none."""

from __future__ import annotations

import orjson
from conversation_samples import APP, full_conversation, with_changes

from pipelines.ces.records import ApiRecord
from pipelines.ingest.flatten import lake_conversation_records
from pipelines.protojson import deepjson


def typed_shape(conversation_id: str) -> dict:
    """The sample conversation without its chunk of a kind the typed decode does not know."""
    conversation = full_conversation(conversation_id)
    chunks = conversation["turns"][1]["messages"][2]["chunks"]
    chunks[:] = [chunk for chunk in chunks if "hologram" not in chunk]
    return conversation


def page_line(conversations: list) -> bytes:
    return deepjson.dumps(
        ApiRecord("list_conversations", {"parent": APP}, {"conversations": conversations}, "t").to_dict()
    )


def test_a_page_of_typed_conversations_gives_each_its_exact_text() -> None:
    conversations = [typed_shape("c1"), typed_shape("c2")]
    line = page_line(conversations)

    [record] = lake_conversation_records([line])
    items = record.result["conversations"]

    assert [item.typed.name for item in items] == [c["name"] for c in conversations]
    assert all(bytes(item.raw) in line for item in items)  # the very bytes of the line
    assert [orjson.loads(bytes(item.raw)) for item in items] == conversations
    assert items[1].value() == conversations[1]
    assert record.fetched_at == "t"


def test_a_conversation_that_does_not_decode_says_why_and_keeps_its_value() -> None:
    odd = with_changes(typed_shape("c2"), ("turns", 0, "messages", 0, "chunks", 0), {"hologram": {}})
    conversations = [typed_shape("c1"), odd, "junk"]

    [record] = lake_conversation_records([page_line(conversations)])
    items = record.result["conversations"]

    assert [item.typed is not None for item in items] == [True, True, False]  # a new chunk kind decodes
    assert items[2].error == "not a conversation: expected `object`, got `str`"
    assert [item.value() for item in items] == conversations
