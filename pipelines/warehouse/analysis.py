"""The settings that shape the warehouse's derived answers, kept in the warehouse itself so that
every reader, a BI tool included, gets the answers the pipeline does: the price of each model
(`model_prices`: `CES_MODEL_PRICES`, else the bundled `model_prices.csv`) for the cost views, and
the robust z-score beyond which `metric_anomalies` flags a day (`anomaly_threshold`:
`CES_ANOMALY_Z`). Each load writes them where they changed; a change shows at the next load."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import duckdb

from pipelines.errors import UsageError
from pipelines.sqlfiles import sql_text

DEFAULT_MODEL_PRICES = str(Path(__file__).with_name("model_prices.csv"))
PRICE_COLUMNS = (
    "model",
    "input_usd_per_million",
    "output_usd_per_million",
    "cached_input_usd_per_million",
    "effective_date",
    "source",
)

Price = tuple[str, float, float, float | None, date | None, str | None]


class PriceFileError(UsageError, ValueError):
    """The model price file cannot be read as prices; the message names the file and the line."""


def read_prices(path: str) -> list[Price]:
    """The prices of a CSV file of PRICE_COLUMNS (lines starting with # are comments): one row per
    model, prices as non-negative numbers (the cached price and the rest may be empty)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            lines = [(n, line) for n, line in enumerate(handle, start=1) if not line.startswith("#")]
    except OSError as exc:
        raise PriceFileError(f"CES_MODEL_PRICES: cannot read {path}: {exc.strerror or exc}") from exc
    rows = csv.DictReader(line for _, line in lines)
    missing = [column for column in PRICE_COLUMNS[:3] if column not in (rows.fieldnames or [])]
    if missing:
        expected = ", ".join(PRICE_COLUMNS)
        raise PriceFileError(f"{path}: no column {', '.join(missing)} (the columns: {expected})")
    prices: dict[str, Price] = {}
    for (number, _), row in zip(lines[1:], rows, strict=False):
        model = (row.get("model") or "").strip()
        if not model:
            raise PriceFileError(f"{path}, line {number}: no model")
        if model in prices:
            raise PriceFileError(f"{path}, line {number}: {model} is priced twice")
        prices[model] = (
            model,
            _price(path, number, row, "input_usd_per_million", required=True),
            _price(path, number, row, "output_usd_per_million", required=True),
            _price(path, number, row, "cached_input_usd_per_million", required=False),
            _day(path, number, row.get("effective_date")),
            (row.get("source") or "").strip() or None,
        )
    return sorted(prices.values())


def _price(path: str, number: int, row: dict[str, str], column: str, *, required: bool) -> float | None:
    text = (row.get(column) or "").strip()
    if not text and not required:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise PriceFileError(f"{path}, line {number}: {column} must be dollars >= 0, got {text!r}")
    return value


def _day(path: str, number: int, text: str | None) -> date | None:
    if not (text or "").strip():
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise PriceFileError(f"{path}, line {number}: effective_date is not YYYY-MM-DD: {text!r}") from None


def create_tables(conn: duckdb.DuckDBPyConnection) -> None:
    """The settings' tables, before the views that read them."""
    conn.execute(sql_text("analysis/create_analysis_tables.sql"))


def write(conn: duckdb.DuckDBPyConnection, prices_path: str, anomaly_z: float) -> bool:
    """Write the prices and the threshold where they differ from what the warehouse holds;
    whether they did."""
    prices = read_prices(prices_path)
    ((held, z),) = conn.execute(sql_text("analysis/current_settings.sql")).fetchall()
    if [tuple(row) for row in held or []] == prices and z == anomaly_z:
        return False
    conn.execute(sql_text("analysis/clear_settings.sql"))
    names = ("model", "input", "output", "cached", "effective", "source")
    for price in prices:
        conn.execute(sql_text("analysis/insert_model_price.sql"), dict(zip(names, price, strict=True)))
    conn.execute(sql_text("analysis/insert_anomaly_threshold.sql"), {"z": anomaly_z})
    return True
