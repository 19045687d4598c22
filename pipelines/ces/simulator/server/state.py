"""The little that changes while the simulator runs: polls, started runs, sessions, framing turns.

Everything else is a pure function of the scale. One `SimulatorState` belongs to one app
instance; uvicorn may call into it from several threads (and tests from others), so every
access takes the lock.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable

from pipelines.ces.simulator.corpus.evaluations import RunPlan


class SimulatorState:
    def __init__(self, clock: Callable[[], int] = time.time_ns):
        self.clock = clock
        """Wall clock in nanoseconds since the epoch, used to stamp runs started by run_evaluation."""
        self._lock = threading.Lock()
        self._run_polls: dict[str, int] = {}
        self._requested_runs: list[RunPlan] = []
        self._sessions: set[str] = set()
        self._responses = 0

    def poll_run(self, name: str) -> int:
        """Count a `get_evaluation_run` of `name`; returns how many came before this one."""
        with self._lock:
            polls = self._run_polls.get(name, 0)
            self._run_polls[name] = polls + 1
            return polls

    def run_polls(self, name: str) -> int:
        with self._lock:
            return self._run_polls.get(name, 0)

    def start_run(self, plan_for: Callable[[int], RunPlan]) -> RunPlan:
        """Record a new run; `plan_for` receives a sequence number no other run has had."""
        with self._lock:
            plan = plan_for(len(self._requested_runs) + 1)
            self._requested_runs.append(plan)
            return plan

    def started_runs(self, app_index: int) -> list[RunPlan]:
        with self._lock:
            return [plan for plan in self._requested_runs if plan.app_index == app_index]

    def started_run(self, *, name: str | None = None, operation: str | None = None) -> RunPlan | None:
        """The started run with this run name and/or operation name, if any."""
        with self._lock:
            for plan in self._requested_runs:
                if (name is None or plan.name == name) and (operation is None or plan.operation == operation):
                    return plan
        return None

    def open_session(self) -> str:
        session_id = secrets.token_hex(16)
        with self._lock:
            self._sessions.add(session_id)
        return session_id

    def has_session(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._sessions

    def close_session(self, session_id: str) -> bool:
        with self._lock:
            if session_id in self._sessions:
                self._sessions.remove(session_id)
                return True
            return False

    def next_response_number(self) -> int:
        """0, 1, 2, ... in the order responses are framed (drives the "mixed" framing and its variety)."""
        with self._lock:
            number = self._responses
            self._responses += 1
            return number
