"""Proto3 JSON encodings of the well-known types, and the seeded randomness behind the data.

Google's servers emit timestamps Z-normalised with exactly 0, 3, 6 or 9 fractional digits
(the fewest that represent the value) and durations as seconds with the same digit rule
("1.450s", "0.000000001s"). Every time in the synthetic corpus is an integer count of
nanoseconds since the epoch, so the encodings here are exact and need no `datetime`.

Randomness is derived from a stable hash of named parts, never from Python's salted `hash()`,
so any one object can be rebuilt alone from (seed, its coordinates) in any process.
"""

from __future__ import annotations

import hashlib
import random
from datetime import date
from functools import lru_cache

NANOS_PER_MICRO = 1_000
NANOS_PER_MILLI = 1_000_000
NANOS_PER_SECOND = 1_000_000_000
NANOS_PER_DAY = 86_400 * NANOS_PER_SECOND
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def _with_fraction(whole: str, nanos: int, suffix: str) -> str:
    """`whole` plus the fewest of 0, 3, 6 or 9 fractional digits that are exact, plus `suffix`.

    Written for speed: a conversation formats ~140 timestamps and durations.
    """
    if nanos % NANOS_PER_MILLI == 0:
        return f"{whole}.{nanos // NANOS_PER_MILLI:03d}{suffix}" if nanos else whole + suffix
    if nanos % NANOS_PER_MICRO == 0:
        return f"{whole}.{nanos // NANOS_PER_MICRO:06d}{suffix}"
    return f"{whole}.{nanos:09d}{suffix}"


@lru_cache(maxsize=65_536)
def _whole_seconds(epoch_seconds: int) -> str:
    """`YYYY-MM-DDTHH:MM:SS` for a second; cached because a turn's many stamps share few seconds."""
    day, second_of_day = divmod(epoch_seconds, 86_400)
    hour, rest = divmod(second_of_day, 3_600)
    minute, second = divmod(rest, 60)
    return f"{date.fromordinal(day + _EPOCH_ORDINAL).isoformat()}T{hour:02d}:{minute:02d}:{second:02d}"


def timestamp(epoch_nanos: int) -> str:
    """RFC 3339 UTC string for nanoseconds since the epoch, as protobuf's JSON printer writes it."""
    seconds, nanos = divmod(epoch_nanos, NANOS_PER_SECOND)
    return _with_fraction(_whole_seconds(seconds), nanos, "Z")


def duration(nanos: int) -> str:
    """Protobuf JSON duration string for a non-negative number of nanoseconds."""
    if nanos < 0:
        raise ValueError(f"negative duration: {nanos}ns")
    seconds, fraction = divmod(nanos, NANOS_PER_SECOND)
    return _with_fraction(str(seconds), fraction, "s")


def epoch_nanos(day: date) -> int:
    """Nanoseconds since the epoch at 00:00:00Z of `day`."""
    return (day.toordinal() - _EPOCH_ORDINAL) * NANOS_PER_DAY


def stable_digest(*parts: object) -> bytes:
    """16 bytes that depend only on `parts` (their `str` forms), identical in every process."""
    text = "\x1f".join(str(part) for part in parts)
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def stable_int(*parts: object) -> int:
    """A 64-bit integer derived from `parts`; see `stable_digest`."""
    return int.from_bytes(stable_digest(*parts)[:8], "big")


def stable_hex(*parts: object, length: int = 8) -> str:
    """A lowercase hex string derived from `parts`, used for opaque-looking resource ids."""
    return stable_digest(*parts).hex()[:length]


def seeded_random(*parts: object) -> random.Random:
    """An independent random stream for one object, reproducible from `parts` alone."""
    return random.Random(stable_int(*parts))


def between(rng: random.Random, low: int, high: int) -> int:
    """A uniform integer in [low, high]; `Random.randint` costs ~20x more and generation is hot."""
    return low + int(rng.random() * (high - low + 1))
