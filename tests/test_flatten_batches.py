"""One flattener over many batches: a batch whose column checks reject a conversation leaves the
next batches whole (a partition is flattened in batches of 200 by one flattener)."""

from __future__ import annotations

from conversation_samples import conversation_name, flatten_conversations, full_conversation, with_changes

from pipelines.transform.conversations import ConversationFlattener


def test_the_batch_after_a_column_reject_keeps_every_row() -> None:
    flattener = ConversationFlattener()
    flattener.add(with_changes(full_conversation("bad"), ("endTime",), "not a time"))
    flattener.add(full_conversation("ok1"))
    first = flattener.take_batches()
    assert first["conversations"].column("conversation_name").to_pylist() == [conversation_name("ok1")]
    assert [reject.resource_name for reject in flattener.take_rejects()] == [conversation_name("bad")]

    flattener.add(full_conversation("ok2"))
    second = flattener.take_batches()
    alone, _ = flatten_conversations([full_conversation("ok2")])
    for name, batch in second.items():
        assert batch.to_pylist() == alone[name].to_pylist(), name
    assert second["spans"].num_rows > 0 and second["chunks"].num_rows > 0
