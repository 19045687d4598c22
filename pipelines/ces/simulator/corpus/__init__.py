"""Deterministic synthetic CES data: pure functions of a `SimulatorScale`, no I/O."""

from pipelines.ces.simulator.corpus.conversations import conversation
from pipelines.ces.simulator.corpus.headers import (
    ConversationHeader,
    ConversationKey,
    conversation_header,
    resolve_conversation_name,
)
from pipelines.ces.simulator.corpus.scale import SimulatorScale

__all__ = [
    "ConversationHeader",
    "ConversationKey",
    "SimulatorScale",
    "conversation",
    "conversation_header",
    "resolve_conversation_name",
]
