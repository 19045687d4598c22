-- The settings that shape derived answers, kept in the warehouse so that every reader gets the
-- same: each model's price (CES_MODEL_PRICES, else the bundled file) and the anomaly threshold
-- (CES_ANOMALY_Z). Each load rewrites them where they changed (pipelines/warehouse/analysis.py).
CREATE TABLE IF NOT EXISTS model_prices (
    model VARCHAR,
    input_usd_per_million DOUBLE,
    output_usd_per_million DOUBLE,
    cached_input_usd_per_million DOUBLE,
    effective_date DATE,
    source VARCHAR
);
CREATE TABLE IF NOT EXISTS anomaly_threshold (z DOUBLE);
