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
-- Each app's daily metrics with the median and MAD of their 28 days before: what metric_anomalies
-- reads, kept by every load (pipelines/warehouse/metric_scores.py, sql/analysis/score_daily_metrics.sql).
CREATE TABLE IF NOT EXISTS daily_metric_scores (
    day DATE,
    app VARCHAR,
    metric VARCHAR,
    value DOUBLE,
    baseline_median DOUBLE,
    baseline_mad DOUBLE,
    baseline_days BIGINT
);
