"""Where evaluation runs and operations are found, and which progress step each is at.

Seeded runs are pure functions of the scale; runs started through `run_evaluation` live in the
state. A run that is still moving advances one step per `get_evaluation_run`: the first poll
shows its starting step, each further poll one step more. A started run also moves with the
server's clock, a step per `run_step_seconds` since it was created, as the service's runs do
whoever polls what: a client that polls only its operation sees it end. Listings and the run's
operation show the step the latest poll returned, or the clock's if that is further, so a client
that polls a run and then lists its results sees the same progress. A started run's results
replay conversations it made (`run_conversations`), each there once its result is complete.
A seeded run created after the server's clock (`--as-of`) is not there yet.
"""

from __future__ import annotations

from functools import cached_property

from pipelines.ces.simulator.corpus.evaluation_outcomes import EvalConversations
from pipelines.ces.simulator.corpus.evaluations import RUN_STEPS, RunPlan, seeded_runs
from pipelines.ces.simulator.corpus.headers import ConversationHeader, eval_conversations
from pipelines.ces.simulator.corpus.replayed_turns import ReplayedTurn, corpus_turns, replayed_turns
from pipelines.ces.simulator.corpus.run_conversations import run_conversations
from pipelines.ces.simulator.server.config import SimulatorConfig
from pipelines.ces.simulator.server.state import SimulatorState


class EvaluationRegistry:
    def __init__(self, config: SimulatorConfig, state: SimulatorState):
        self.config = config
        self.scale = config.scale
        self.state = state
        self.step_nanos = max(int(config.run_step_seconds * 1e9), 1)
        """How long a started run takes to move one step by the clock alone."""

    @cached_property
    def _seeded_by_name(self) -> dict[str, RunPlan]:
        return {plan.name: plan for app in range(self.scale.apps) for plan in seeded_runs(self.scale, app)}

    @cached_property
    def _seeded_by_operation(self) -> dict[str, RunPlan]:
        return {plan.operation: plan for plan in self._seeded_by_name.values()}

    def _created(self, plan: RunPlan | None) -> RunPlan | None:
        """A seeded run, if the server's clock has reached its creation."""
        as_of = self.config.as_of_nanos
        return plan if plan is not None and (as_of is None or plan.create_time <= as_of) else None

    def runs(self, app_index: int) -> list[RunPlan]:
        seeded = [plan for plan in seeded_runs(self.scale, app_index) if self._created(plan)]
        return [*seeded, *self.state.started_runs(app_index)]

    def run(self, name: str) -> RunPlan | None:
        return self._created(self._seeded_by_name.get(name)) or self.state.started_run(name=name)

    def _step(self, plan: RunPlan, polls: int) -> int:
        elapsed = 0
        if self.state.started_run(name=plan.name) is not None:
            elapsed = max(self.state.clock() - plan.create_time, 0) // self.step_nanos
        return min(plan.start_step + max(polls, elapsed), RUN_STEPS)

    def poll(self, plan: RunPlan) -> int:
        """The step a `get_evaluation_run` returns now; moves a queued or running run forward."""
        return self._step(plan, self.state.poll_run(plan.name))

    def current_step(self, plan: RunPlan) -> int:
        """The step the latest poll returned (the starting step before any poll), or the clock's."""
        return self._step(plan, max(self.state.run_polls(plan.name) - 1, 0))

    def operation(self, name: str) -> tuple[RunPlan, int] | None:
        """The run an operation created and the step it is at (`current_step`), or None if
        unknown: an operation follows its run, which polling it does not move."""
        plan = self._created(self._seeded_by_operation.get(name)) or self.state.started_run(operation=name)
        return None if plan is None else (plan, self.current_step(plan))

    def made_conversations(self, app_index: int) -> list[tuple[ConversationHeader, bool]]:
        """Each conversation the app's started runs make, in the order they were started (a
        listing's positions stay put), and whether it is there yet: its result is complete."""
        made = []
        for plan in self.state.started_runs(app_index):
            finished = plan.finished_at(self.current_step(plan))
            made.extend(
                (header, position < finished) for position, header in run_conversations(self.scale, plan)
            )
        return made

    def made_conversation(self, name: str) -> ConversationHeader | None:
        """The conversation a started run made under `name`, once its result is complete."""
        app = self.scale.app_index(name.rpartition("/conversations/")[0])
        made = self.made_conversations(app) if app is not None else []
        return next((header for header, there in made if there and header.name == name), None)

    def replayed(self, app_index: int) -> EvalConversations:
        """What the app's results replay: the corpus's EVAL conversations, and those its started
        runs made, by result."""
        by_result = {
            plan.results[position].name: header
            for plan in self.state.started_runs(app_index)
            for position, header in run_conversations(self.scale, plan)
        }
        by_name = {header.name: header for header in by_result.values()}

        def turns(name: str) -> tuple[ReplayedTurn, ...]:
            header = by_name.get(name)
            return corpus_turns(self.scale, name) if header is None else replayed_turns(self.scale, header)

        made = {result: (header.name, header.start) for result, header in by_result.items()}
        return EvalConversations(eval_conversations(self.scale, app_index), turns, made)
