"""The one decoding of a CES `Conversation`: msgspec structs, type-checked on the way (its message,
naming the path, is the reject reason), struct-valued fields kept as JSON text (`Raw`); a trace
too deep for msgspec is converted span by span. `gc=False`: decoded JSON has no cycles, and a
batch's ~100,000 structs would lengthen every collection."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType

from pipelines.protojson import deepjson

ABSENT = Raw()
"""A `Raw` field's value when the member was not sent (`Raw(b"null")` when it was, as null)."""


class ToolsetTool(Struct, rename="camel", gc=False):
    toolset: str | None = None
    tool_id: str | None = None


class Blob(Struct, rename="camel", gc=False):
    mime_type: str | None = None
    data: str | None = None


class Image(Struct, rename="camel", gc=False):
    mime_type: str | None = None
    data: str | None = None
    alt_text: str | None = None


class _ToolUse(Struct, rename="camel", gc=False):
    """What a tool call and a tool response both say of the tool."""

    id: str | None = None
    tool: str | None = None
    toolset_tool: ToolsetTool | None = None
    display_name: str | None = None
    parent_tool_call_id: str | None = None
    agent_name: str | None = None
    target_app: str | None = None


class ToolCall(_ToolUse, gc=False):
    args: Raw = ABSENT


class ToolResponse(_ToolUse, gc=False):
    response: Raw = ABSENT


class AgentTransfer(Struct, rename="camel", gc=False):
    target_agent: str | None = None
    display_name: str | None = None


class Chunk(Struct, rename="camel", gc=False):
    """The `data` oneof: UNSET (or ABSENT) marks a member not sent; a chunk with none may hold a newer one."""

    text: str | UnsetType | None = UNSET
    transcript: str | UnsetType | None = UNSET
    blob: Blob | UnsetType | None = UNSET
    image: Image | UnsetType | None = UNSET
    payload: Raw = ABSENT
    updated_variables: Raw = ABSENT
    default_variables: Raw = ABSENT
    tool_call: ToolCall | UnsetType | None = UNSET
    tool_response: ToolResponse | UnsetType | None = UNSET
    agent_transfer: AgentTransfer | UnsetType | None = UNSET


class Message(Struct, rename="camel", gc=False):
    role: str | None = None
    chunks: list[Chunk] | None = None
    event_time: str | None = None


class Span(Struct, rename="camel", gc=False):
    name: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    duration: str | None = None
    attributes: Raw = ABSENT
    child_spans: list[Span] | None = None


class Turn(Struct, rename="camel", gc=False):
    messages: list[Message] | None = None
    root_span: Span | None = None
    user_intended_text: str | None = None


class Conversation(Struct, rename="camel", gc=False):
    name: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    turns: list[Turn] | None = None
    turn_count: int | float | str | None = None
    source: str | int | None = None  # enums: a name, or its number (see protojson.enums)
    channel_type: str | int | None = None
    input_types: list[str | int] | None = None
    entry_agent: str | None = None
    deployment: str | None = None
    app_version: str | None = None
    language_code: str | None = None
    messages: list[Message] | None = None


class _ErrorMember(Struct):
    error: Raw = ABSENT


_CONVERSATION = msgspec.json.Decoder(Conversation)
_ERROR_MEMBER = msgspec.json.Decoder(_ErrorMember)
_AT_PATH = re.compile(r"^(?P<what>.*) - at `\$\.?(?P<path>[^`]*)`$", re.DOTALL)


def has_error_member(response: Raw) -> bool:
    try:
        return bool(_ERROR_MEMBER.decode(response).error)
    except msgspec.DecodeError:  # not an object
        return False


class LakeConversation:
    """One conversation's JSON text with its typed decode, or the reason it has none."""

    __slots__ = ("_value", "error", "raw", "typed")

    def __init__(self, raw: bytes | Raw, value: Any = UNSET):
        self.raw = raw
        self._value = value
        self.error: str | None = None
        self.typed: Conversation | None = None
        try:
            self.typed = _CONVERSATION.decode(raw)
        except RecursionError:
            self._decode_deep()
        except msgspec.DecodeError as exc:
            self.error = reason_of(exc)

    @classmethod
    def of(cls, value: Any) -> LakeConversation:
        try:
            raw = deepjson.dumps(value)
        except TypeError:
            conversation = cls(b"{}", value)
            conversation.typed, conversation.error = None, "conversation is not JSON"
            return conversation
        return cls(raw, value)

    def value(self) -> Any:
        """The conversation as parsed JSON: for rejects, and for chunk kinds added later."""
        if self._value is UNSET:
            self._value = deepjson.loads(memoryview(self.raw))
        return self._value

    def listing(self) -> Any:
        """What the listing judge looks at (without a typed decode, all that was sent)."""
        typed = self.typed
        if typed is None:
            return self.value()
        return {
            "name": typed.name,
            "startTime": typed.start_time,
            "turnCount": typed.turn_count,
            "turns": typed.turns,
        }

    def _decode_deep(self) -> None:
        """Decode a conversation nested deeper than msgspec recurses, span by span."""
        value = self.value()
        turns = value.get("turns") if isinstance(value, dict) else None
        roots = [turn.get("rootSpan") if isinstance(turn, dict) else None for turn in turns or ()]
        if isinstance(turns, list):
            value = {**value, "turns": [_without(turn, "rootSpan") for turn in turns]}
        try:
            typed = _convert(value, Conversation, "")
            for index, root in enumerate(roots):
                if root is not None and typed.turns is not None:
                    typed.turns[index].root_span = _span_tree(root, f"turns[{index}].rootSpan")
        except msgspec.ValidationError as exc:
            self.error = reason_of(exc)
            return
        except RecursionError:
            self.error = "object nested too deeply"
            return
        self.typed = typed


def reason_of(error: msgspec.DecodeError) -> str:
    """A reject reason from msgspec's message: `path: what is wrong`."""
    message = str(error)
    found = _AT_PATH.match(message)
    if found is None:
        return f"not a conversation: {message[:1].lower()}{message[1:]}"
    what = found.group("what")
    return f"{found.group('path') or 'conversation'}: {what[:1].lower()}{what[1:]}"


_RAW_MEMBERS = {"attributes", "payload", "updatedVariables", "defaultVariables", "args", "response"}
"""Members kept as JSON text (`Raw`), which a conversion from parsed JSON must serialise."""


def _without(item: Any, key: str) -> Any:
    return {k: v for k, v in item.items() if k != key} if isinstance(item, dict) else item


def _raw_members(value: Any) -> Any:
    """`value` with every member typed `Raw` serialised to its JSON text (iteratively)."""
    root = {"": value}
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in list(items):
            if isinstance(node, dict) and key in _RAW_MEMBERS:
                node[key] = Raw(deepjson.dumps(child))
            elif isinstance(child, dict | list):
                child = dict(child) if isinstance(child, dict) else list(child)
                node[key] = child
                stack.append(child)
    return root[""]


def _convert(value: Any, type_: type, path: str) -> Any:
    """`msgspec.convert` with `Raw` members serialised first; an error's path from the root."""
    try:
        return msgspec.convert(_raw_members(value), type_)
    except msgspec.ValidationError as exc:
        found = _AT_PATH.match(str(exc))
        if found is None or not path:
            raise
        inner = found.group("path")
        where = f"{path}.{inner}" if inner and not inner.startswith("[") else f"{path}{inner}"
        raise msgspec.ValidationError(f"{found.group('what')} - at `$.{where}`") from None


def _span_tree(root: Any, path: str) -> Span:
    """A span tree converted span by span with an explicit stack (no recursion)."""
    top = _convert(_without(root, "childSpans"), Span, path)
    stack: list[tuple[Any, Span, str]] = [(root, top, path)]
    while stack:
        node, span, where = stack.pop()
        children = node.get("childSpans") if isinstance(node, dict) else None
        if children is None:
            continue
        if not isinstance(children, list):
            kind = type(children).__name__
            message = f"Expected `array | null`, got `{kind}` - at `$.{where}.childSpans`"
            raise msgspec.ValidationError(message)
        span.child_spans = []
        for index, child in enumerate(children):
            child_path = f"{where}.childSpans[{index}]"
            converted = _convert(_without(child, "childSpans"), Span, child_path)
            span.child_spans.append(converted)
            stack.append((child, converted, child_path))
    return top
