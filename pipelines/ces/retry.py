"""When a failed CES exchange is sent again (through tenacity): a transient failure (connection,
timeout, HTTP 429 or 5xx, a broken body, a transient Google code or quota reason, which may come
with HTTP 403) of an idempotent call, or of any call that surely never left this machine. It waits
what the server asked, else full-jitter backoff (after a quota refusal at least half the ceiling,
to spread retries over the quota's window), `max_attempts` times within `max_seconds`, a quota
refusal until `quota_seconds` (a per-minute quota turns over within 90 s)."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import tenacity

from pipelines.ces.errors import CesError, CesMalformedResponseError, CesTransportError

logger = logging.getLogger("pipelines.ces.retry")

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
TRANSIENT_CODES = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "ABORTED", "INTERNAL"})
"""google.rpc codes of a failure worth another try (AIP-194, and quota exhaustion)."""
QUOTA_REASONS = frozenset({"RATE_LIMIT_EXCEEDED", "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"})
"""`google.rpc.ErrorInfo` reasons of a quota refusal, which Google may send with HTTP 403."""


def is_transient(error: BaseException) -> bool:
    """Could the same request succeed if sent again a little later?"""
    if isinstance(error, CesTransportError) and (
        error.status_code is None or error.status_code in RETRYABLE_STATUS
    ):
        return True
    if isinstance(error, CesError) and (error.google.code in TRANSIENT_CODES or is_quota(error)):
        return True
    return isinstance(error, CesMalformedResponseError)


def asked_delay(error: BaseException | None) -> float | None:
    """The wait the server asked for: its Retry-After header, else a RetryInfo in its error."""
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, int | float):
        return float(retry_after)
    return error.google.retry_delay if isinstance(error, CesError) else None


def is_quota(error: BaseException) -> bool:
    """Was the request refused because a quota is spent? That lasts until its window turns over."""
    if isinstance(error, CesTransportError) and error.status_code == 429:
        return True
    return isinstance(error, CesError) and (
        error.google.code == "RESOURCE_EXHAUSTED" or bool(error.google.reasons & QUOTA_REASONS)
    )


def may_resend(error: BaseException, *, idempotent: bool) -> bool:
    if not is_transient(error):
        return False
    if idempotent:
        return True
    return isinstance(error, CesTransportError) and not error.request_sent


@dataclass(frozen=True)
class RetryPolicy:
    """The retry budget of one exchange; `CesSettings` documents each number (its `CES_*` setting)."""

    max_attempts: int = 5
    max_seconds: float = 120.0
    initial_backoff_seconds: float = 0.5
    max_backoff_seconds: float = 30.0
    quota_seconds: float = 90.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def backoff(self, attempt: int, *, quota: bool = False) -> float:
        """Full jitter up to min(cap, initial * 2**(attempt-1)); for a quota refusal from half of it."""
        ceiling = min(self.max_backoff_seconds, self.initial_backoff_seconds * 2 ** (attempt - 1))
        return self.rng.uniform(ceiling / 2 if quota else 0.0, ceiling)

    def run(
        self,
        attempt: Callable[[], T],
        *,
        idempotent: bool,
        label: str,
        on_retry: Callable[[BaseException, int, float], None] | None = None,
    ) -> T:
        """Call `attempt` until it returns or must stop; `on_retry(error, attempt, delay)` before a wait."""
        started = self.clock()

        def wait(state: tenacity.RetryCallState) -> float:
            """What the server asked for, else the backoff."""
            error = _failure(state)
            retry_after = asked_delay(error)
            if retry_after is not None and retry_after >= 0:
                return float(retry_after)
            return self.backoff(state.attempt_number, quota=is_quota(error))

        def stop(state: tenacity.RetryCallState) -> bool:
            if self.max_attempts <= 1:  # "never retry" holds for quota refusals too
                return True
            elapsed = self.clock() - started + state.upcoming_sleep
            if is_quota(_failure(state)):
                return elapsed >= self.quota_seconds
            return state.attempt_number >= self.max_attempts or elapsed >= self.max_seconds

        def before_sleep(state: tenacity.RetryCallState) -> None:
            error = _failure(state)
            assert error is not None
            status = getattr(error, "status_code", None)
            logger.info(
                "%s: attempt %d of %d failed (%s); retrying in %.2f s",
                label,
                state.attempt_number,
                self.max_attempts,
                f"HTTP {status}" if status else type(error).__name__,
                state.upcoming_sleep,
            )
            if on_retry is not None:
                on_retry(error, state.attempt_number, state.upcoming_sleep)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda error: may_resend(error, idempotent=idempotent)),
            stop=stop,
            wait=wait,
            before_sleep=before_sleep,
            sleep=self.sleep,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except CesError as error:
            if self.max_attempts > 1 and may_resend(error, idempotent=idempotent):
                attempts = retrying.statistics.get("attempt_number", 1)
                _note_gave_up(error, attempts, self.clock() - started, self)
            raise


def _failure(state: tenacity.RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome else None


def _note_gave_up(error: CesError, attempts: int, elapsed: float, policy: RetryPolicy) -> None:
    """Say in the error's own message that retrying stopped, and why."""
    error.attempts = attempts
    tried = f"gave up after {attempts} attempt{'s' if attempts > 1 else ''} in {elapsed:.1f} s"
    retry_after = asked_delay(error)
    wanted = f"; the server asked to wait {retry_after:g} s" if retry_after else ""
    if is_quota(error):
        why = (
            f"{tried}: the quota stayed exhausted past the {policy.quota_seconds:g} s it is waited out "
            f"(CES_QUOTA_RETRY_SECONDS){wanted}"
        )
    elif attempts >= policy.max_attempts:
        why = tried
    else:
        why = f"{tried}: the next retry would pass the {policy.max_seconds:g} s retry budget{wanted}"
    if error.args and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]} ({why})", *error.args[1:])
    else:
        error.args = (why,)
