"""JSON at any depth: orjson refuses 1,024 levels (254 to write), `json` recurses; deep spans must pass."""

from __future__ import annotations

import json
import re
from json.decoder import scanstring
from json.scanner import NUMBER_RE
from typing import Any

import orjson

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DEPTH_ERRORS = ("depth limit", "recursion limit")


def _too_deep(error: Exception) -> bool:
    return any(marker in str(error).lower() for marker in _DEPTH_ERRORS)


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text; raises `orjson.JSONDecodeError` (a ValueError) when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if not _too_deep(exc):
            raise
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        return _parse(text)
    except ValueError as exc:
        raise orjson.JSONDecodeError(f"not JSON: {exc}", "", 0) from None


def dumps(value: Any) -> bytes:
    """Serialise compactly; raises `orjson.JSONEncodeError` (a TypeError) for a non-JSON value."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError as exc:
        if not _too_deep(exc):
            raise
    try:
        return _serialise(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise orjson.JSONEncodeError(f"str is not valid UTF-8: {exc.reason}") from None


# -- the iterative parser -------------------------------------------------------------------------


def _skip(text: str, pos: int) -> int:
    return _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]


def _expect(text: str, pos: int, char: str) -> int:
    if text[pos : pos + 1] != char:
        raise ValueError(f"expected {char!r} at offset {pos}")
    return _skip(text, pos + 1)


def _key(text: str, pos: int) -> tuple[str, int]:
    if text[pos : pos + 1] != '"':
        raise ValueError(f"expected an object key at offset {pos}")
    key, pos = scanstring(text, pos + 1, True)
    return key, _expect(text, _skip(text, pos), ":")


def _scalar(text: str, pos: int) -> tuple[Any, int]:
    char = text[pos : pos + 1]
    if char == '"':
        return scanstring(text, pos + 1, True)
    match = NUMBER_RE.match(text, pos)
    if match is not None:
        integer, fraction, exponent = match.groups()
        if fraction or exponent:
            return float(integer + (fraction or "") + (exponent or "")), match.end()
        return int(integer), match.end()
    for literal, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(literal, pos):
            return value, pos + len(literal)
    raise ValueError(f"unexpected {text[pos : pos + 20]!r} at offset {pos}")


def _parse(text: str) -> Any:
    """Parse with an explicit stack of open containers (and, for objects, the pending key)."""
    containers: list[list[Any] | dict[str, Any]] = []
    keys: list[str] = []
    pos = _skip(text, 0)
    while True:
        char = text[pos : pos + 1]
        if char == "{":
            pos = _skip(text, pos + 1)
            if text[pos : pos + 1] == "}":
                value: Any = {}
                pos += 1
            else:
                key, pos = _key(text, pos)
                containers.append({})
                keys.append(key)
                continue
        elif char == "[":
            pos = _skip(text, pos + 1)
            if text[pos : pos + 1] == "]":
                value = []
                pos += 1
            else:
                containers.append([])
                keys.append("")
                continue
        else:
            value, pos = _scalar(text, pos)
        # Attach the finished value; close every container that ends right after it.
        while True:
            if not containers:
                pos = _skip(text, pos)
                if pos != len(text):
                    raise ValueError(f"extra data at offset {pos}")
                return value
            top = containers[-1]
            if isinstance(top, list):
                top.append(value)
            else:
                top[keys[-1]] = value
            pos = _skip(text, pos)
            char = text[pos : pos + 1]
            if char == ",":
                pos = _skip(text, pos + 1)
                if isinstance(top, dict):
                    keys[-1], pos = _key(text, pos)
                break
            if char != ("]" if isinstance(top, list) else "}"):
                raise ValueError(f"expected ',' or a closing bracket at offset {pos}")
            pos += 1
            value = containers.pop()
            keys.pop()


# -- the iterative serialiser ---------------------------------------------------------------------

_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return _encode_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and value not in (float("inf"), float("-inf")) else "null"
    raise orjson.JSONEncodeError(f"Type is not JSON serializable: {type(value).__name__}")


def _serialise(root: Any) -> str:
    """Serialise with an explicit stack of (iterator, is object, closing bracket, first item)."""
    parts: list[str] = []
    stack: list[list[Any]] = []
    value = root
    while True:
        if isinstance(value, dict):
            parts.append("{")
            stack.append([iter(value.items()), True, "}", True])
        elif isinstance(value, list | tuple):
            parts.append("[")
            stack.append([iter(value), False, "]", True])
        else:
            parts.append(_scalar_text(value))
        while stack:
            frame = stack[-1]
            item = next(frame[0], _END)
            if item is _END:
                parts.append(frame[2])
                stack.pop()
                continue
            if not frame[3]:
                parts.append(",")
            frame[3] = False
            if frame[1]:
                key, value = item
                if not isinstance(key, str):
                    raise orjson.JSONEncodeError("Dict key must be str")
                parts.append(_encode_string(key))
                parts.append(":")
            else:
                value = item
            break
        else:
            return "".join(parts)


_END = object()
