"""The conversations a run started through `run_evaluation` makes: an EVAL conversation for each
result it completes, starting as the result begins, which that result replays. (Seeded runs
replay the corpus's EVAL conversations: `evaluation_outcomes.eval_conversation`.)

Their ids read as the corpus's do (`YYYYMMDD-NNNNNN-xxxxxxxx`), with an index past the scale's
conversations a day, so `headers.resolve_conversation_name` never takes one for the corpus's."""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache

from pipelines.ces.simulator.corpus.evaluations import RunPlan
from pipelines.ces.simulator.corpus.headers import ConversationHeader, ConversationKey
from pipelines.ces.simulator.corpus.protojson import NANOS_PER_DAY, NANOS_PER_MICRO, epoch_nanos, stable_hex
from pipelines.ces.simulator.corpus.scale import SimulatorScale

_INDEXES = 1_000_000
"""Ids carry six digits of index."""


@lru_cache(maxsize=256)
def run_conversations(scale: SimulatorScale, plan: RunPlan) -> tuple[tuple[int, ConversationHeader], ...]:
    """(position of the result in `plan.results`, header) of the conversation each completed
    result (PASS or FAIL) of the run made."""
    app_name = scale.app_names[plan.app_index]
    first = epoch_nanos(scale.start_date)
    made = []
    for position, result in enumerate(plan.results):
        if result.outcome not in ("PASS", "FAIL"):
            continue
        start = plan.result_start(result)
        start -= start % NANOS_PER_MICRO
        day = (start - first) // NANOS_PER_DAY
        spare = _INDEXES - scale.conversations_per_day
        index = scale.conversations_per_day + int(stable_hex(result.name, "made-index"), 16) % spare
        conversation_id = (
            f"{scale.start_date + timedelta(days=day):%Y%m%d}-{index:06d}-{stable_hex(result.name, 'made')}"
        )
        key = ConversationKey(plan.app_index, day, index)
        made.append(
            (
                position,
                ConversationHeader(
                    key, f"{app_name}/conversations/{conversation_id}", start, "EVAL", NANOS_PER_MICRO
                ),
            )
        )
    return tuple(made)
