"""Seeded, deterministic fault injection for the simulator: `ces-pipeline simulate --faults SPEC`.

SPEC is a comma-separated list of `KIND:RATE` items (RATE the chance, 0..1, that one request
meets that fault) and `OPTION=VALUE` items, e.g. `503:0.1,429:0.05,reset:0.02,cut-sse:0.05,seed=7`.

Transport faults, injected by ASGI middleware wrapped around the whole app (the `faults` seam):

| kind | what the client sees |
| --- | --- |
| `429` | HTTP 429 RESOURCE_EXHAUSTED with `Retry-After` (option `retry-after`, seconds, default 1) |
| `500`, `502`, `503`, `504` | that status with a Google-style error body (502, 504: plain text) |
| `403-quota` | HTTP 403 PERMISSION_DENIED, its `ErrorInfo` reason `RATE_LIMIT_EXCEEDED` (a spent quota) |
| `503-retry-info` | HTTP 503 UNAVAILABLE with a `RetryInfo` delay (`retry-after`), no `Retry-After` header |
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

`all:RATE` sets every kind at once. Options: `seed=N` (default 0), `limit=N` (a given request
meets at most N faults in all, so a client retrying N times always gets through; default no
limit), `retry-after=S`, `slow-seconds=S`.

Deterministic: whether a request meets a fault depends only on the seed, the request's content
(JSON-RPC method and params, not its id) and how many times that same request was seen before,
never on timing or thread interleaving. The same spec and the same requests give the same
faults. Each request meets at most one fault; `SimulatedFaults.injected` counts them by kind.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
import struct
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATUS_KINDS = ("429", "500", "502", "503", "504")
GOOGLE_KINDS = ("403-quota", "503-retry-info")
TRANSPORT_KINDS = (*STATUS_KINDS, *GOOGLE_KINDS, "reset", "slow", "cut-sse", "bad-json")
DATA_KINDS = ("expire-token", "dup", "repeat-page")
KINDS = (*TRANSPORT_KINDS, *DATA_KINDS)

_OPTIONS = ("seed", "limit", "retry-after", "slow-seconds")
_UNIT = 2.0**64
_REMEMBERED_LISTINGS = 256
_GOOGLE_STATUS = {
    429: ("RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Read requests' (simulated fault)."),
    500: ("INTERNAL", "Internal error encountered (simulated fault)."),
    503: ("UNAVAILABLE", "The service is currently unavailable (simulated fault)."),
}
_PLAIN_STATUS = {502: "Bad Gateway", 504: "Gateway Timeout"}

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

    def __post_init__(self) -> None:
        for kind, rate in self.rates.items():
            if kind not in KINDS:
                raise FaultSpecError(f"unknown fault kind {kind!r}; known kinds: {', '.join(KINDS)}")
            if not 0.0 <= rate <= 1.0:
                raise FaultSpecError(f"the rate of {kind} must be within [0, 1], got {rate}")
        if self.limit is not None and self.limit < 0:
            raise FaultSpecError(f"limit must not be negative, got {self.limit}")
        if self.retry_after < 0 or self.slow_seconds < 0:
            raise FaultSpecError("retry-after and slow-seconds must not be negative")

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
            for each in KINDS if kind == "all" else (kind,):
                if each not in KINDS:
                    raise FaultSpecError(
                        f"unknown fault kind {each!r} in {item!r}; known kinds: all, {', '.join(KINDS)}"
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


# -- the transport faults -----------------------------------------------------------------------


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None when the client went away first."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app the body already read, then waits on the real one."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _with_accept(scope: Scope, media_type: str) -> Scope:
    scope = dict(scope)
    headers = MutableHeaders(scope=scope)
    headers["accept"] = media_type
    return scope


async def _drop_connection(send: Send, *, reset: bool) -> bool:
    """Close the client's connection without a word (RST when `reset`); False if the server
    does not let us reach its transport (only uvicorn's is known)."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None:
        return False
    if reset:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    await asyncio.sleep(0)  # let the server notice the connection is gone before we return
    return True


class _Recorded:
    """A response captured whole from the app, to be sent back altered."""

    def __init__(self) -> None:
        self.start: Message | None = None
        self.body: list[bytes] = []

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.start = message
        elif message["type"] == "http.response.body":
            self.body.append(message.get("body", b""))

    def content_type(self) -> str:
        headers = dict(self.start["headers"]) if self.start else {}
        return headers.get(b"content-type", b"").decode("latin-1").partition(";")[0].strip()

    @property
    def ok(self) -> bool:
        return self.start is not None and self.start["status"] == 200


class FaultMiddleware:
    """Injects the transport faults of `faults` into the POST requests reaching `app`."""

    def __init__(self, app: ASGIApp, faults: SimulatedFaults):
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return
        receive = _replaying(body, receive)
        key = request_key(body)
        kind = self.faults.decide("transport", TRANSPORT_KINDS, key)
        if kind is None:
            await self.app(scope, receive, send)
        elif kind in STATUS_KINDS:
            await self._status(int(kind))(scope, receive, send)
        elif kind in GOOGLE_KINDS:
            await self._google(kind)(scope, receive, send)
        elif kind == "reset":
            if not await _drop_connection(send, reset=True):
                raise ConnectionResetError("simulated connection reset")
        elif kind == "slow":
            await self._slow(scope, receive, send)
        else:
            await self._cut(kind, key, scope, receive, send)

    def _google(self, kind: str) -> Response:
        """Google's own error shapes: the canonical code in `status`, the why in `details`."""
        if kind == "403-quota":
            status, reason, detail = (
                403,
                "PERMISSION_DENIED",
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "RATE_LIMIT_EXCEEDED",
                    "domain": "googleapis.com",
                    "metadata": {"service": "ces.googleapis.com"},
                },
            )
        else:
            status, reason, detail = (
                503,
                "UNAVAILABLE",
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{self.faults.spec.retry_after:g}s",
                },
            )
        error = {"code": status, "message": "simulated fault", "status": reason, "details": [detail]}
        return Response(orjson.dumps({"error": error}), status_code=status, media_type="application/json")

    def _status(self, status: int) -> Response:
        if status in _PLAIN_STATUS:
            text = f"{status} {_PLAIN_STATUS[status]} (simulated fault)"
            return Response(text.encode(), status_code=status, media_type="text/plain")
        reason, message = _GOOGLE_STATUS[status]
        body = orjson.dumps({"error": {"code": status, "message": message, "status": reason}})
        headers = {"Retry-After": f"{self.faults.spec.retry_after:g}"} if status == 429 else None
        return Response(body, status_code=status, media_type="application/json", headers=headers)

    async def _slow(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer only after `slow-seconds`, unless the client gave up waiting first."""
        body_message = await receive()  # the replayed body, for the app later

        async def client_gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        try:
            await asyncio.wait_for(client_gone(), timeout=self.faults.spec.slow_seconds)
            return  # the client timed out and left: nothing to answer
        except TimeoutError:
            pass
        await self.app(scope, _replaying(body_message.get("body", b""), receive), send)

    async def _cut(self, kind: str, key: bytes, scope: Scope, receive: Receive, send: Send) -> None:
        """Let the app answer in the framing the fault needs, then send only half of it."""
        media_type = "text/event-stream" if kind == "cut-sse" else "application/json"
        recorded = _Recorded()
        await self.app(_with_accept(scope, media_type), receive, recorded.send)
        assert recorded.start is not None
        body = b"".join(recorded.body)
        if not recorded.ok or recorded.content_type() != media_type or len(body) < 2:
            self.faults.undo(kind, key)  # nothing to cut (an error, a notification's 202)
            await send(recorded.start)
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        half = body[: len(body) // 2]
        if kind == "bad-json":
            headers = [(k, v) for k, v in recorded.start["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(half)).encode()))
            await send({**recorded.start, "headers": headers})
            await send({"type": "http.response.body", "body": half, "more_body": False})
            return
        await send(recorded.start)
        await send({"type": "http.response.body", "body": half, "more_body": True})
        # Half the cuts drop the connection mid-body; the others end the stream cleanly, early.
        if self.faults.draw("cut-style", key.hex()) < 0.5 and await _drop_connection(send, reset=False):
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})
