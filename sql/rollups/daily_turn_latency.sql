-- How long does a caller wait for the agent (perceived latency), and how long does a turn take?
-- Grain: one row per (day, app); day is the UTC day of the conversation's start_time (the day of its partition).
-- Read from each turn's root span: its "perceived latency (ms)" attribute and its duration.
-- Percentiles are exact and interpolated (quantile_cont); a turn without the attribute counts
-- in turns but not in the perceived latency percentiles.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    day,
    app,
    count(*) AS turns,
    count(TRY_CAST(attributes ->> 'perceived latency (ms)' AS DOUBLE)) AS turns_with_perceived_latency,
    quantile_cont(TRY_CAST(attributes ->> 'perceived latency (ms)' AS DOUBLE), 0.5) AS perceived_p50_ms,
    quantile_cont(TRY_CAST(attributes ->> 'perceived latency (ms)' AS DOUBLE), 0.9) AS perceived_p90_ms,
    quantile_cont(TRY_CAST(attributes ->> 'perceived latency (ms)' AS DOUBLE), 0.99) AS perceived_p99_ms,
    quantile_cont(duration_seconds, 0.5) AS duration_p50_seconds,
    quantile_cont(duration_seconds, 0.9) AS duration_p90_seconds,
    quantile_cont(duration_seconds, 0.99) AS duration_p99_seconds
FROM component_spans
SEMI JOIN rollup_partitions USING (app, day)
WHERE day BETWEEN $first AND $last AND component = 'Turn'
GROUP BY day, app
