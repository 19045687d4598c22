"""JSON at any depth: orjson's limits (1,024 levels in, 254 out) must not cost a deep trace."""

from __future__ import annotations

import json
import random

import orjson
import pytest

from pipelines.protojson import deepjson


def deep_span_tree(depth: int) -> dict:
    root: dict = {"name": "span-0", "duration": "1s", "attributes": {"model": "m", "n": [1, 2.5, None]}}
    node = root
    for level in range(1, depth):
        child = {"name": f"span-{level}", "duration": "0.001s", "attributes": {"level": level}}
        node["childSpans"] = [child]
        node = child
    return root


@pytest.mark.parametrize("depth", [10, 200, 2_000, 10_000])
def test_round_trip_at_any_depth(depth: int) -> None:
    tree = deep_span_tree(depth)
    text = deepjson.dumps(tree)
    back = deepjson.loads(text)
    assert deepjson.dumps(back) == text == deepjson.dumps(deepjson.loads(text.decode()))
    while "childSpans" in back:  # walked, not compared: `==` on nested dicts recurses too
        back = back["childSpans"][0]
    assert back == {"name": f"span-{depth - 1}", "duration": "0.001s", "attributes": {"level": depth - 1}}
    if depth <= 100:
        assert text == orjson.dumps(tree)  # the same bytes orjson writes


def test_the_fallbacks_agree_with_orjson_and_json_on_shallow_values() -> None:
    rng = random.Random(5)
    scalars = [0, -7, 2**53, 1.5, -2.5e-7, "", 'é\u2028"\\\x01', None, True, False]

    def value(level: int = 0):
        pick = rng.random()
        if level > 4 or pick < 0.4:
            return rng.choice(scalars)
        if pick < 0.7:
            return [value(level + 1) for _ in range(rng.randint(0, 4))]
        return {f"k{i}\n": value(level + 1) for i in range(rng.randint(0, 4))}

    for _ in range(500):
        item = value()
        assert json.loads(deepjson._serialise(item)) == item
        assert deepjson._parse(orjson.dumps(item).decode()) == item
        assert deepjson._parse(json.dumps(item, indent=2)) == item


@pytest.mark.parametrize("text", ["[1,]", "{", "[1 2]", '{"a" 1}', "tru", "[1]x", "", "[" * 2000 + "1"])
def test_what_is_not_json_stays_an_error(text: str) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        deepjson.loads(text)


def test_what_is_not_serialisable_stays_an_error() -> None:
    deep: list = []
    node = deep
    for _ in range(400):
        node.append([])
        node = node[0]
    node.append(object())
    with pytest.raises(TypeError):
        deepjson.dumps(deep)
