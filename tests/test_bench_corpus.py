"""The benchmark on conversations from elsewhere: a JSON Lines file becomes raw-lake partitions
that the rebuild reads like any fetched partition."""

from __future__ import annotations

import gzip
from datetime import date
from pathlib import Path

import orjson

from bench.corpus import write_external_corpus
from pipelines.ces.simulator.corpus import ConversationKey, SimulatorScale, conversation
from pipelines.ingest.flatten import CONVERSATIONS_DATASET, flatten_conversation_partition
from pipelines.lake.store import Lake

SCALE = SimulatorScale(seed=5, apps=2, days=2, conversations_per_day=130, max_turns=3, span_depth=2)


def test_a_conversations_file_becomes_partitions_by_app_and_day(tmp_path: Path) -> None:
    source = tmp_path / "conversations.jsonl.gz"
    items = [
        conversation(SCALE, ConversationKey(app, day, index))
        for app in range(2)
        for day in range(2)
        for index in range(130)
    ]
    with gzip.open(source, "wb") as out:
        for item in items:
            out.write(orjson.dumps(item) + b"\n")
        out.write(b"not json\n\n")
        out.write(orjson.dumps({"name": "conversations/without-an-app", "startTime": "2026-11-01T00:00:00Z"}))

    lake = Lake(str(tmp_path / "lake"))
    written = write_external_corpus(source, lake.root)

    assert written["partitions"] == 4 and written["unplaced_lines"] == 2
    days = [SCALE.start_date, date.fromordinal(SCALE.start_date.toordinal() + 1)]
    assert lake.raw_partitions(CONVERSATIONS_DATASET) == sorted(
        (app, day) for app in SCALE.app_names for day in days
    )
    for app, day in lake.raw_partitions(CONVERSATIONS_DATASET):
        pages = [orjson.loads(line) for line in lake.read_raw_lines(CONVERSATIONS_DATASET, app, day)]
        assert [len(page["result"]["conversations"]) for page in pages] == [100, 30]
        flattened = flatten_conversation_partition(lake, app, day)
        assert flattened.rows["conversations"] == 130 and flattened.rejects == 0
    first = orjson.loads(next(lake.read_raw_lines(CONVERSATIONS_DATASET, SCALE.app_names[0], days[0])))
    assert first["result"]["conversations"][0] == items[0]
