-- Span latency percentiles by span name per day (LLM, Tool, Callback, Guardrail, TTS, ...).
-- Grain: one row per (day, span_name); day is the UTC date of the span's start_time.
-- Percentiles are exact (quantile_cont) over duration_seconds.
CREATE OR REPLACE VIEW daily_span_latency AS
SELECT
    CAST(timezone('UTC', start_time) AS DATE) AS day,
    name AS span_name,
    count(*) AS spans,
    quantile_cont(duration_seconds, 0.5) AS p50_seconds,
    quantile_cont(duration_seconds, 0.9) AS p90_seconds,
    quantile_cont(duration_seconds, 0.99) AS p99_seconds,
    max(duration_seconds) AS max_seconds
FROM spans
WHERE start_time IS NOT NULL AND duration_seconds IS NOT NULL
GROUP BY ALL;
