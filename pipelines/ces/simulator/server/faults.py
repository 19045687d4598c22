"""Seeded, deterministic fault injection for the simulator: `ces-pipeline simulate --faults SPEC`.

SPEC is a comma-separated list of `KIND:RATE` items (RATE the chance, 0..1, that one request or
one served object meets that kind) and `OPTION=VALUE` items, e.g.
`503:0.1,429:0.05,reset:0.02,cut-sse:0.05,seed=7`.

Faults a client must get through (`all:RATE` sets every one of them), with exactly the rows of a
fault-free run in the end. Transport faults are injected by ASGI middleware wrapped around the
whole app (`transport_faults.py`):

| kind | what the client sees |
| --- | --- |
| `429` | HTTP 429 RESOURCE_EXHAUSTED with `Retry-After` (option `retry-after`, seconds, default 1) |
| `500`, `502`, `503`, `504` | that status with a Google-style error body (502, 504: plain text) |
| `403-quota` | HTTP 403 PERMISSION_DENIED, its `ErrorInfo` reason `RATE_LIMIT_EXCEEDED` (a spent quota) |
| `503-retry-info` | HTTP 503 UNAVAILABLE with a `RetryInfo` delay (`retry-after`), no `Retry-After` header |
| `rpc-error` | HTTP 200 with a JSON-RPC error whose `data` is a `google.rpc.Status` UNAVAILABLE |
| `tool-error` | a `tools/call` result with `isError`: UNAVAILABLE as text, Status JSON or structured |
| `reset` | the connection reset (TCP RST) before any response |
| `slow` | no response for `slow-seconds` (default 90, beyond the client's 60 s timeout), then the answer |
| `cut-sse` | an SSE response cut in the middle: half of it, then the connection drops or the stream ends |
| `bad-json` | an application/json response cut in half: a body that does not parse |

Data faults, injected where pages are built (`ToolBox`):

| kind | what the client sees |
| --- | --- |
| `expire-token` | a list request with a page token fails: INVALID_ARGUMENT "page token expired" |
| `dup` | a conversation of the previous `list_conversations` page listed again on this page |
| `repeat-page` | a `list_conversations` page served twice in a row (under two different next tokens) |

A hostile or broken server, which a client must stop clearly, or one that reads the reference
otherwise (not in `all`):

| kind | what the client sees |
| --- | --- |
| `403-disabled` | HTTP 403 PERMISSION_DENIED, `ErrorInfo` reason `SERVICE_DISABLED`: a permanent error |
| `drip` | the answer trickles at `drip-bps` bytes per second (default 1) |
| `huge` | a JSON answer led by `huge-mb` MB of whitespace (default 300) |
| `ignore-filter` | a conversation listing (per listing) that ignores its `filter`: the whole history |
| `empty-forever` | a conversation listing (per listing) of empty pages, each with a fresh next token |
| `live-by-default` | a listing asked for neither `source` nor `sources` holds LIVE conversations only |
| `deleted` | `get_conversation` of a listed conversation says NOT_FOUND (deleted since listed) |

Shapes of proto3 JSON and MCP that the corpus does not use by default (`shapes:RATE` sets them
all); RATE is the share of served conversations, runs, results and operations so shaped. All but
`loose-times` parse with protobuf's strict JSON parser (`new-enums` with unknown values ignored);
all but `new-enums` and `sparse-ids` mean exactly what the plain corpus means:

| kind | what the client sees |
| --- | --- |
| `sse-priming` | an SSE answer led by a priming event (`id`, empty `data`), as resumable SDK servers send |
| `enum-numbers` | enums written as their numbers (`"source": 1`) |
| `new-enums` | values of a later API version: unknown enum names and numbers, run states while running |
| `null-fields` | `null` for absent members (`"text": null` beside a tool call) and absent optional fields |
| `lenient-formats` | the same instants and bytes: offsets such as `+05:30`, MIME or URL-safe base64 |
| `loose-times` | instants only lenient parsers read (protobuf refuses them): `+0530`, a leap second `:60` |
| `no-traces` | listed conversations whose turns carry no `rootSpan` (`get_conversation` has them) |
| `sparse-ids` | toolset tools named without `toolId`; a latency report with two callbacks of one stage |
| `late-run-name` | a `run_evaluation` operation that names its run only once done (`get_operation` polled) |

Options: `seed=N` (default 0), `limit=N` (a given request meets at most N faults in all, so a
client retrying N times always gets through; default no limit), `retry-after=S`,
`slow-seconds=S`, `drip-bps=N`, `huge-mb=N`.

Deterministic: whether a request meets a fault depends only on the seed, the request's content
(JSON-RPC method and params, not its id) and how many times that same request was seen before,
never on timing or thread interleaving; whether an object or a listing is shaped depends only on
the seed and its name. The same spec and the same requests give the same faults. Each request
meets at most one transport fault; `SimulatedFaults.injected` counts them by kind.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.types import ASGIApp

STATUS_KINDS = ("429", "500", "502", "503", "504")
GOOGLE_KINDS = ("403-quota", "503-retry-info")
RPC_KINDS = ("rpc-error", "tool-error")
RECOVERABLE_TRANSPORT_KINDS = (
    *STATUS_KINDS,
    *GOOGLE_KINDS,
    *RPC_KINDS,
    "reset",
    "slow",
    "cut-sse",
    "bad-json",
)
DATA_KINDS = ("expire-token", "dup", "repeat-page")
ALL_KINDS = (*RECOVERABLE_TRANSPORT_KINDS, *DATA_KINDS)
"""What `all:RATE` sets: every fault a client gets through into the fault-free rows."""
HOSTILE_KINDS = (
    "403-disabled",
    "drip",
    "huge",
    "ignore-filter",
    "empty-forever",
    "live-by-default",
    "deleted",
)
SHAPE_KINDS = (
    "sse-priming",
    "enum-numbers",
    "new-enums",
    "null-fields",
    "lenient-formats",
    "loose-times",
    "no-traces",
    "sparse-ids",
    "late-run-name",
)
TRANSPORT_KINDS = (*RECOVERABLE_TRANSPORT_KINDS, "403-disabled", "drip", "huge", "sse-priming")
"""The kinds the middleware decides, at most one per request."""
KINDS = (*ALL_KINDS, *HOSTILE_KINDS, *SHAPE_KINDS)
_GROUPS = {"all": ALL_KINDS, "shapes": SHAPE_KINDS}

_OPTIONS = ("seed", "limit", "retry-after", "slow-seconds", "drip-bps", "huge-mb")
_UNIT = 2.0**64
_REMEMBERED_LISTINGS = 256

Corrupter = Callable[[dict[str, Any]], Any]
"""Rewrites a served conversation (return a new object; never mutate the argument)."""


class FaultSpecError(ValueError):
    """A SPEC that cannot be read; the message says which item and why."""


@dataclass(frozen=True)
class FaultSpec:
    """What `parse_fault_spec` read: a rate per fault kind and the options."""

    rates: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0
    limit: int | None = None
    retry_after: float = 1.0
    slow_seconds: float = 90.0
    drip_bps: float = 1.0
    huge_mb: float = 300.0

    def __post_init__(self) -> None:
        for kind, rate in self.rates.items():
            if kind not in KINDS:
                raise FaultSpecError(f"unknown fault kind {kind!r}; known kinds: {', '.join(KINDS)}")
            if not 0.0 <= rate <= 1.0:
                raise FaultSpecError(f"the rate of {kind} must be within [0, 1], got {rate}")
        if self.limit is not None and self.limit < 0:
            raise FaultSpecError(f"limit must not be negative, got {self.limit}")
        if self.retry_after < 0 or self.slow_seconds < 0 or self.huge_mb < 0:
            raise FaultSpecError("retry-after, slow-seconds and huge-mb must not be negative")
        if not self.drip_bps > 0:
            raise FaultSpecError(f"drip-bps must be positive, got {self.drip_bps}")

    def rate(self, kind: str) -> float:
        return self.rates.get(kind, 0.0)

    def describe(self) -> str:
        """The spec in its canonical SPEC form."""
        items = [f"{kind}:{self.rates[kind]:g}" for kind in KINDS if self.rates.get(kind)]
        items.append(f"seed={self.seed}")
        if self.limit is not None:
            items.append(f"limit={self.limit}")
        if self.rates.get("429"):
            items.append(f"retry-after={self.retry_after:g}")
        if self.rates.get("slow"):
            items.append(f"slow-seconds={self.slow_seconds:g}")
        if self.rates.get("drip"):
            items.append(f"drip-bps={self.drip_bps:g}")
        if self.rates.get("huge"):
            items.append(f"huge-mb={self.huge_mb:g}")
        return ",".join(items)


def parse_fault_spec(text: str) -> FaultSpec:
    """Read a SPEC such as `503:0.1,429:0.05,reset:0.02,cut-sse:0.05,seed=7` (see the module doc)."""
    rates: dict[str, float] = {}
    options: dict[str, Any] = {}
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        if "=" in item:
            name, _, value = (part.strip() for part in item.partition("="))
            if name not in _OPTIONS:
                raise FaultSpecError(f"unknown option {name!r} in {item!r}; options: {', '.join(_OPTIONS)}")
            options[name] = _number(value, item, integer=name in ("seed", "limit"))
        elif ":" in item:
            kind, _, value = (part.strip() for part in item.rpartition(":"))
            rate = _number(value, item, integer=False)
            for each in _GROUPS.get(kind, (kind,)):
                if each not in KINDS:
                    raise FaultSpecError(
                        f"unknown fault kind {each!r} in {item!r}; "
                        f"known kinds: all, shapes, {', '.join(KINDS)}"
                    )
                rates[each] = rate
        else:
            raise FaultSpecError(f"cannot read {item!r}: expected KIND:RATE or OPTION=VALUE")
    return FaultSpec(
        rates=rates,
        seed=options.get("seed", 0),
        limit=options.get("limit"),
        retry_after=options.get("retry-after", 1.0),
        slow_seconds=options.get("slow-seconds", 90.0),
        drip_bps=options.get("drip-bps", 1.0),
        huge_mb=options.get("huge-mb", 300.0),
    )


def _number(value: str, item: str, *, integer: bool) -> Any:
    try:
        return int(value) if integer else float(value)
    except ValueError:
        wanted = "an integer" if integer else "a number"
        raise FaultSpecError(f"{item!r}: {value!r} is not {wanted}") from None


def request_key(body: bytes) -> bytes:
    """What identifies a request across its retries: the JSON-RPC method and params, minus `_meta`."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return hashlib.sha256(body).digest()[:16]
    if isinstance(message, dict):
        params = message.get("params")
        if isinstance(params, dict):
            params = {k: v for k, v in params.items() if k != "_meta"}
        message = [message.get("method"), params]
    return hashlib.sha256(orjson.dumps(message, option=orjson.OPT_SORT_KEYS)).digest()[:16]


class SimulatedFaults:
    """The faults of one simulator. Pass it as `SimulatorConfig(faults=...)`.

    Calling it on an ASGI app wraps the app with the transport faults; the simulator's tools
    consult it for the data faults (`listing_fault`) and to rewrite served conversations
    (`corrupt`, for bad-input tests: a function given each conversation listed or fetched).
    """

    def __init__(self, spec: FaultSpec | str = "", *, corrupt: Corrupter | None = None):
        self.spec = parse_fault_spec(spec) if isinstance(spec, str) else spec
        self.corrupt = corrupt
        self._lock = threading.Lock()
        self._seen: Counter[tuple[str, bytes]] = Counter()
        self._faulted: Counter[bytes] = Counter()
        self._injected: Counter[str] = Counter()
        self._last_pages: OrderedDict[str, tuple[int, list[dict[str, Any]]]] = OrderedDict()

    def __call__(self, app: ASGIApp) -> ASGIApp:
        from pipelines.ces.simulator.server.transport_faults import FaultMiddleware

        return FaultMiddleware(app, self)

    def __repr__(self) -> str:
        return f"SimulatedFaults({self.spec.describe()!r})"

    @property
    def injected(self) -> Counter[str]:
        """Faults injected so far, by kind."""
        with self._lock:
            return Counter(self._injected)

    # -- decisions ---------------------------------------------------------------------------

    def draw(self, *parts: object) -> float:
        """A uniform number in [0, 1) that depends only on the seed and `parts`."""
        digest = hashlib.sha256(orjson.dumps([self.spec.seed, *map(str, parts)])).digest()
        return int.from_bytes(digest[:8], "big") / _UNIT

    def decide(self, group: str, kinds: Iterable[str], key: bytes) -> str | None:
        """The fault this occurrence of request `key` meets, if any, among `kinds` (in order)."""
        kinds = [kind for kind in kinds if self.spec.rate(kind) > 0]
        with self._lock:
            occurrence = self._seen[(group, key)]
            self._seen[(group, key)] += 1
            if not kinds or (self.spec.limit is not None and self._faulted[key] >= self.spec.limit):
                return None
            for kind in kinds:
                if self.draw(kind, key.hex(), occurrence) < self.spec.rate(kind):
                    self._faulted[key] += 1
                    self._injected[kind] += 1
                    return kind
        return None

    def undo(self, kind: str, key: bytes) -> None:
        """Forget a decided fault that could not be applied (e.g. `cut-sse` on an error response)."""
        with self._lock:
            self._faulted[key] -= 1
            self._injected[kind] -= 1

    def listing_fault(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        """The data fault one page request meets, if any."""
        kinds = ["expire-token"] if arguments.get("pageToken") else []
        if tool == "list_conversations":
            kinds += ["repeat-page", "dup"]
        return self.decide("page", kinds, request_key(orjson.dumps([tool, dict(arguments)])))

    def chosen(self, kind: str, name: str) -> bool:
        """Whether the object or listing called `name` is served with `kind` (counted when so)."""
        rate = self.spec.rate(kind)
        if rate <= 0 or self.draw(kind, name) >= rate:
            return False
        with self._lock:
            self._injected[kind] += 1
        return True

    def variant(self, token: str) -> int:
        """A token variant for `repeat-page`: the repeated page's next token differs from its own."""
        return 1 + int(self.draw("variant", token) * 2**31)

    # -- memory of listings, for `dup` ---------------------------------------------------------

    def remember_page(self, listing: str, page_number: int, items: Sequence[dict[str, Any]]) -> None:
        with self._lock:
            self._last_pages[listing] = (page_number, list(items))
            self._last_pages.move_to_end(listing)
            while len(self._last_pages) > _REMEMBERED_LISTINGS:
                self._last_pages.popitem(last=False)

    def with_duplicate(
        self, listing: str, page_number: int, items: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """`items` plus one item of the previous page of `listing` (when it was the last served)."""
        with self._lock:
            remembered = self._last_pages.get(listing)
        previous = remembered[1] if remembered is not None and remembered[0] == page_number - 1 else []
        names = {item.get("name") for item in items}
        candidates = [item for item in previous if item.get("name") not in names]
        if not candidates:
            return items
        pick = candidates[int(self.draw("dup-item", listing, page_number) * len(candidates))]
        where = int(self.draw("dup-place", listing, page_number) * (len(items) + 1))
        return [*items[:where], pick, *items[where:]]
