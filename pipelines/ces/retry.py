"""When a failed CES exchange is sent again, and how long to wait first.

The one rule book for retries, applied by `CesMcpClient._send` to every HTTP exchange through
tenacity (a small, widely used retry library: its stop, wait and retry strategies compose, so
the rules below read as they are and the loop itself is not ours to get wrong):

- What is transient: connection failures, timeouts, HTTP 429, 500, 502, 503 and 504, a broken
  or truncated body (an SSE stream cut before the response, a JSON body that does not parse),
  and a tool result that failed with UNAVAILABLE, RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED
  (servers that wrap Google API errors into tool results report overload that way).
  Anything else (400, 403, 404, a JSON-RPC or tool error, a redirect) fails at once with the
  server's message. HTTP 401 and an expired session are not retries: the client renews the
  credentials or the session once and sends again (see `CesMcpClient._send`/`_request`).
- Who may be re-sent: idempotent calls (`list_*`, `get_*`, `tools/list`, the handshake). A
  call that is not idempotent (`run_evaluation`) is re-sent only when the request surely never
  left this machine (the connection could not be opened); once it may have reached the server
  it is never sent again.
- How long to wait: exponential backoff with full jitter (a random wait between 0 and
  `initial_backoff_seconds * 2**(attempt-1)`, capped at `max_backoff_seconds`), or exactly the
  server's `Retry-After` when it gave one.
- How long to try: at most `max_attempts` attempts, and no wait that would end past
  `max_seconds` after the first attempt began. The error that ends it says how many attempts
  were made.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import tenacity

from pipelines.ces.errors import CesError, CesMalformedResponseError, CesToolError, CesTransportError

logger = logging.getLogger("pipelines.ces.retry")

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
TRANSIENT_TOOL_STATUSES = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"})
"""google.rpc codes of a tool-level failure worth another try (AIP-194 and quota exhaustion)."""
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_MAX_SECONDS = 120.0
DEFAULT_INITIAL_BACKOFF_SECONDS = 0.5
DEFAULT_MAX_BACKOFF_SECONDS = 30.0


def is_transient(error: BaseException) -> bool:
    """Could the same request succeed if sent again a little later?"""
    if isinstance(error, CesTransportError):
        # No status: the connection failed, timed out, or the body broke off mid-way.
        return error.status_code is None or error.status_code in RETRYABLE_STATUS
    if isinstance(error, CesToolError):
        return error.server_message.partition(":")[0].strip() in TRANSIENT_TOOL_STATUSES
    return isinstance(error, CesMalformedResponseError)


def may_resend(error: BaseException, *, idempotent: bool) -> bool:
    """Is re-sending the request after `error` both useful and safe?"""
    if not is_transient(error):
        return False
    if idempotent:
        return True
    return isinstance(error, CesTransportError) and not error.request_sent


@dataclass(frozen=True)
class RetryPolicy:
    """The retry budget of one exchange. `RetryPolicy.never()` sends everything exactly once."""

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    """Attempts in all, the first included (1: never retry)."""
    max_seconds: float = DEFAULT_MAX_SECONDS
    """No retry starts later than this after the first attempt began."""
    initial_backoff_seconds: float = DEFAULT_INITIAL_BACKOFF_SECONDS
    max_backoff_seconds: float = DEFAULT_MAX_BACKOFF_SECONDS
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)
    """Source of the jitter (seed it for reproducible waits)."""
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.max_seconds < 0 or self.initial_backoff_seconds < 0 or self.max_backoff_seconds < 0:
            raise ValueError("retry times must not be negative")

    @classmethod
    def never(cls) -> RetryPolicy:
        return cls(max_attempts=1)

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(cap, initial * 2**(attempt-1))] after failed attempt `attempt`."""
        ceiling = min(self.max_backoff_seconds, self.initial_backoff_seconds * 2 ** (attempt - 1))
        return self.rng.uniform(0.0, ceiling)

    def delay(self, error: BaseException | None, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt`: the server's Retry-After, else the backoff."""
        retry_after = getattr(error, "retry_after", None)
        if isinstance(retry_after, int | float) and retry_after >= 0:
            return float(retry_after)
        return self.backoff(attempt)

    def run(
        self,
        attempt: Callable[[], T],
        *,
        idempotent: bool,
        label: str,
        on_retry: Callable[[BaseException, int, float], None] | None = None,
    ) -> T:
        """Call `attempt` until it returns, or raise its last error once retrying must stop.

        `on_retry(error, failed_attempt, delay)` runs before each wait (the client counts
        retries with it).
        """

        def wait(state: tenacity.RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome else None
            return self.delay(error, state.attempt_number)

        def before_sleep(state: tenacity.RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            delay = state.upcoming_sleep
            assert error is not None
            logger.info(
                "%s: attempt %d of %d failed (%s); retrying in %.2f s",
                label,
                state.attempt_number,
                self.max_attempts,
                _short(error),
                delay,
            )
            if on_retry is not None:
                on_retry(error, state.attempt_number, delay)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(lambda error: may_resend(error, idempotent=idempotent)),
            stop=(
                tenacity.stop_after_attempt(self.max_attempts) | tenacity.stop_before_delay(self.max_seconds)
            ),
            wait=wait,
            before_sleep=before_sleep,
            sleep=self.sleep,
            reraise=True,
        )
        started = time.monotonic()
        try:
            return retrying(attempt)
        except CesError as error:
            if self.max_attempts > 1 and may_resend(error, idempotent=idempotent):
                attempts = retrying.statistics.get("attempt_number", 1)
                _note_gave_up(error, attempts, time.monotonic() - started, self)
            raise


def _short(error: BaseException) -> str:
    status = getattr(error, "status_code", None)
    return f"HTTP {status}" if status else type(error).__name__


def _note_gave_up(error: CesError, attempts: int, elapsed: float, policy: RetryPolicy) -> None:
    """Say in the error's own message that retrying stopped, and why."""
    error.attempts = attempts
    if attempts >= policy.max_attempts:
        why = f"gave up after {attempts} attempt{'s' if attempts > 1 else ''} in {elapsed:.1f} s"
    else:
        retry_after = getattr(error, "retry_after", None)
        wanted = f"; the server asked to wait {retry_after:g} s" if retry_after else ""
        why = (
            f"gave up after {attempts} attempt{'s' if attempts > 1 else ''} in {elapsed:.1f} s: "
            f"the next retry would pass the {policy.max_seconds:g} s retry budget{wanted}"
        )
    if error.args and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]} ({why})", *error.args[1:])
    else:
        error.args = (why,)
