"""LLM cost at the prices of a price file, computed by hand from the conversations' token counts:
per day, agent and model, per conversation, the models without a price counted and named, and
the token efficiency per turn and per conversation that ended without an error."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import trend_samples as samples
from pytest import approx

from pipelines.warehouse.analysis import DEFAULT_MODEL_PRICES, PriceFileError, read_prices
from pipelines.warehouse.duck import Warehouse
from pipelines.warehouse.queries import run_query

FLASH_ONLY = """\
# only one of the two models the samples use: the other is unpriced
model,input_usd_per_million,output_usd_per_million,cached_input_usd_per_million,effective_date,source
gemini-2.5-flash,0.30,2.50,0.03,2026-03-01,test
"""
PRICES = {"gemini-2.5-flash": (0.30, 2.50)}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    root = tmp_path_factory.mktemp("costs")
    prices = root / "prices.csv"
    prices.write_text(FLASH_ONLY)
    warehouse = Warehouse(str(root / "warehouse.duckdb"), model_prices=str(prices))
    return samples.build_warehouse(root, warehouse)[1]


def _llm_calls() -> list[dict]:
    found = []
    for span in samples.spans():
        if span["component"] != "LLM":
            continue
        attributes = span["attributes"]
        found.append(
            {
                "day": span["day"],
                "app": span["app"],
                "agent": attributes.get("agent", "unknown"),
                "model": attributes.get("model", "unknown"),
                "input": round(float(attributes.get("input token count", 0))),
                "output": round(float(attributes.get("output token count", 0))),
            }
        )
    return found


def _cost(call: dict) -> float | None:
    price = PRICES.get(call["model"])
    return None if price is None else (call["input"] * price[0] + call["output"] * price[1]) / 1e6


def _rows(warehouse: Warehouse, sql: str) -> list[dict]:
    with warehouse.connect(read_only=True) as conn:
        cursor = conn.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_daily_costs_price_each_agent_and_models_tokens_and_leave_unpriced_models_null(
    warehouse: Warehouse,
) -> None:
    expected: dict[tuple, list[dict]] = defaultdict(list)
    for call in _llm_calls():
        expected[(call["day"], call["app"], call["agent"], call["model"])].append(call)
    found = {
        (r["day"], r["app"], r["agent"], r["model"]): r for r in _rows(warehouse, "SELECT * FROM daily_costs")
    }
    assert set(found) == set(expected)
    assert {key[3] for key in found} == {"gemini-2.5-flash", "gemini-2.5-pro"}
    for key, calls in expected.items():
        row = found[key]
        assert row["llm_calls"] == len(calls)
        assert (row["input_tokens"], row["output_tokens"]) == (
            sum(c["input"] for c in calls),
            sum(c["output"] for c in calls),
        )
        if key[3] in PRICES:
            assert row["priced"] is True
            assert row["cost_usd"] == approx(sum(_cost(c) for c in calls))
        else:
            assert row["priced"] is False and row["cost_usd"] is None  # never costed at zero


def _llm_calls_by_conversation() -> list[tuple[str, dict]]:
    found = []
    for _, item in samples.all_conversations():
        for turn in item["turns"]:
            stack = [turn["rootSpan"]]
            while stack:
                span = stack.pop()
                stack.extend(span.get("childSpans", []))
                if span["name"] == "LLM":
                    attributes = span.get("attributes", {})
                    call = {
                        "model": attributes.get("model", "unknown"),
                        "input": round(float(attributes.get("input token count", 0))),
                        "output": round(float(attributes.get("output token count", 0))),
                    }
                    found.append((item["name"], call))
    return found


def test_each_conversation_is_costed_and_its_unpriced_calls_named(warehouse: Warehouse) -> None:
    by_conversation: dict[str, list[dict]] = defaultdict(list)
    for name, call in _llm_calls_by_conversation():
        by_conversation[name].append(call)
    found = {row["conversation_name"]: row for row in _rows(warehouse, "SELECT * FROM conversation_costs")}
    assert set(found) == set(by_conversation)
    for name, calls in by_conversation.items():
        row = found[name]
        priced = [_cost(c) for c in calls if c["model"] in PRICES]
        unpriced = sorted({c["model"] for c in calls if c["model"] not in PRICES})
        assert row["cost_usd"] == (approx(sum(priced)) if priced else None), name
        assert row["unpriced_calls"] == sum(c["model"] not in PRICES for c in calls)
        assert (row["unpriced_models"] or []) == unpriced


def test_daily_cost_and_token_efficiency_queries(warehouse: Warehouse) -> None:
    columns, rows = run_query(warehouse, "daily_cost", {"by": "app"})
    answered = [dict(zip(columns, row, strict=True)) for row in rows]
    calls = _llm_calls()
    for row in answered:
        mine = [c for c in calls if (c["day"], c["app"]) == (row["day"], row["app"])]
        assert row["cost_usd"] == approx(round(sum(_cost(c) or 0.0 for c in mine), 6))
        assert row["unpriced_calls"] == sum(c["model"] not in PRICES for c in mine)
        assert row["unpriced_models"] == "gemini-2.5-pro"

    columns, rows = run_query(warehouse, "token_efficiency", {})
    efficiency = {(r[0], r[1]): dict(zip(columns, r, strict=True)) for r in rows}
    spent: dict[str, int] = defaultdict(int)
    for name, call in _llm_calls_by_conversation():
        spent[name] += call["input"] + call["output"]
    assert efficiency
    for (day, app), row in efficiency.items():
        held = [
            item
            for a, item in samples.all_conversations()
            if a == app and samples.utc_day(item["startTime"]) == day
        ]
        turns = sum(len(item["turns"]) for item in held)
        tokens = sum(spent[item["name"]] for item in held)
        assert (row["conversations"], row["turns"], row["tokens"]) == (len(held), turns, tokens)
        assert row["tokens_per_turn"] == approx(round(tokens / turns, 1))
        clean = [item for item in held if "endTime" in item and not _tool_error(item)]
        assert row["clean_conversations"] == len(clean)
        clean_tokens = sum(spent[item["name"]] for item in clean)
        assert row["tokens_per_clean_conversation"] == (
            approx(round(clean_tokens / len(clean), 1)) if clean else None
        )


def _tool_error(item: dict) -> bool:
    return any(
        "error" in chunk["toolResponse"]["response"]
        for turn in item["turns"]
        for message in turn["messages"]
        for chunk in message["chunks"]
        if "toolResponse" in chunk
    )


def test_the_bundled_prices_cover_the_models_ces_uses_and_a_bad_file_names_its_line(tmp_path: Path) -> None:
    bundled = {price[0]: price for price in read_prices(DEFAULT_MODEL_PRICES)}
    assert {"gemini-2.5-flash", "gemini-2.5-pro", "gemini-live-2.5-flash"} <= set(bundled)
    assert all(price[1] > 0 and price[2] > 0 and price[5] for price in bundled.values())
    bad = tmp_path / "prices.csv"
    bad.write_text(FLASH_ONLY + "gemini-2.5-pro,one,10,,,\n")
    with pytest.raises(PriceFileError, match=r"prices.csv, line 4: input_usd_per_million must be dollars"):
        read_prices(str(bad))
    bad.write_text(FLASH_ONLY + FLASH_ONLY.splitlines()[-1] + "\n")
    with pytest.raises(PriceFileError, match=r"gemini-2\.5-flash is priced twice"):
        read_prices(str(bad))
