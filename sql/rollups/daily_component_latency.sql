-- How slow is each component (LLM, Tool, Callback, Guardrail, TTS, VAD, Agent, whole Turn) per day?
-- Grain: one row per (day, app, component); day is the UTC day of the conversation's start_time (the day of its partition).
-- Components come from component_spans; percentiles are exact and interpolated (quantile_cont)
-- over the spans' duration_seconds.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    day,
    app,
    component,
    count(*) AS spans,
    quantile_cont(duration_seconds, 0.5) AS p50_seconds,
    quantile_cont(duration_seconds, 0.9) AS p90_seconds,
    quantile_cont(duration_seconds, 0.99) AS p99_seconds,
    max(duration_seconds) AS max_seconds,
    sum(duration_seconds) AS total_seconds
FROM component_spans
SEMI JOIN rollup_partitions USING (app, day)
WHERE day BETWEEN $first AND $last AND duration_seconds IS NOT NULL
GROUP BY day, app, component
