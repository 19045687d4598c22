"""Enum values by name, whether the API sends names or numbers, held to google-cloud-ces's protos."""

from __future__ import annotations

import pytest
from conversation_samples import flatten_conversations, full_conversation
from google.cloud import ces_v1beta

from pipelines.protojson.enums import ENUMS, enum_name
from pipelines.protojson.violations import SchemaViolation
from pipelines.transform.evaluations import EvaluationRunFlattener

POOL = ces_v1beta.Conversation.meta.pb.DESCRIPTOR.file.pool


@pytest.mark.parametrize("enum", sorted(ENUMS))
def test_every_enum_table_is_the_protos(enum: str) -> None:
    descriptor = POOL.FindEnumTypeByName(f"google.cloud.ces.v1beta.{enum}")
    assert ENUMS[enum] == tuple(value.name for value in sorted(descriptor.values, key=lambda v: v.number))
    assert [value.number for value in descriptor.values] == list(range(len(ENUMS[enum])))


def test_a_number_becomes_its_name_and_an_unknown_one_its_decimal_string() -> None:
    assert enum_name(3, "Conversation.Source", "source") == "EVAL"
    assert enum_name("EVAL", "Conversation.Source", "source") == "EVAL"
    assert enum_name("FUTURE_SOURCE", "Conversation.Source", "source") == "FUTURE_SOURCE"
    assert enum_name(42, "Conversation.Source", "source") == "42"
    assert enum_name(None, "Conversation.Source", "source") is None
    with pytest.raises(SchemaViolation, match="source: expected an enum name or number"):
        enum_name(1.5, "Conversation.Source", "source")


def test_a_conversation_with_enums_as_numbers_loads_with_their_names() -> None:
    conversation = full_conversation() | {
        "source": 1,
        "channelType": 2,
        "inputTypes": [1, "INPUT_TYPE_AUDIO", 99],
    }
    tables, rejects = flatten_conversations([conversation])
    assert rejects == []
    (row,) = tables["conversations"].to_pylist()
    assert (row["source"], row["channel_type"]) == ("LIVE", "AUDIO")
    assert row["input_types"] == ["INPUT_TYPE_TEXT", "INPUT_TYPE_AUDIO", "99"]


def test_an_evaluation_run_with_enums_as_numbers_loads_with_their_names() -> None:
    run = {
        "name": "projects/p/locations/l/apps/a/evaluationRuns/r",
        "state": 2,
        "evaluationType": 1,
        "errorInfo": {"errorType": 5, "errorMessage": "quota"},
    }
    runs = EvaluationRunFlattener()
    assert runs.add(run, 0)
    (row,) = runs.take_batches()["evaluation_runs"].to_pylist()
    assert (row["state"], row["evaluation_type"], row["error_type"]) == (
        "COMPLETED",
        "GOLDEN",
        "QUOTA_EXHAUSTED",
    )
