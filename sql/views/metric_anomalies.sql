-- Which days stand out from the weeks before them, metric by metric and app by app?
-- Grain: one row per (day, app, metric), for every daily metric the dashboard draws: conversations,
-- turn_p90_seconds (turn duration), llm_p90_seconds, tool_p90_seconds and the other components'
-- p90 (daily_component_latency), tool_error_rate, tokens (input + output), cost_usd and
-- evaluation_pass_rate (completed runs' results that passed).
-- baseline_median and baseline_mad (median absolute deviation) are those of the metric's values on
-- the 28 days before the day (baseline_days of them have a value); z is the robust z-score
-- 0.6745 x (value - baseline_median) / spread, where spread is the MAD but at least 5% of the
-- median (a metric that barely moved for weeks, as a day's p90 of a few dozen conversations can,
-- would otherwise flag ordinary moves); NULL with fewer than 7 baseline days or a spread of 0 (a
-- baseline of zeros). A day is anomalous when |z| reaches anomaly_threshold.z (CES_ANOMALY_Z), or
-- when its baseline was all zeros and the value is not.
-- The view reads every day; metric_anomalies_in(first_day, end_day, only_app) computes the days
-- [first_day, end_day) of one app (resource name or id; NULL: all) from their 28 days before only,
-- so a query, check or tool asking about a few days costs those days, not the history.
CREATE OR REPLACE MACRO metric_anomalies_in(first_day, end_day, only_app) AS TABLE
WITH daily AS (
    SELECT day, app, metric, value
    FROM (
        SELECT day, app, 'conversations' AS metric, CAST(sum(conversations) AS DOUBLE) AS value
        FROM daily_conversations GROUP BY day, app
        UNION ALL
        SELECT day, app, 'turn_p90_seconds', duration_p90_seconds FROM daily_turn_latency
        UNION ALL
        SELECT day, app, lower(component) || '_p90_seconds', p90_seconds
        FROM daily_component_latency WHERE component <> 'Turn'
        UNION ALL
        SELECT day, app, 'tool_error_rate', sum(errors) / nullif(sum(responses), 0)
        FROM daily_tool_error_rate GROUP BY day, app
        UNION ALL
        SELECT day, app, 'tokens', CAST(sum(input_tokens + output_tokens) AS DOUBLE)
        FROM daily_llm_tokens GROUP BY day, app
        UNION ALL
        SELECT day, app, 'cost_usd', sum(cost_usd) FROM daily_costs GROUP BY day, app
        UNION ALL
        SELECT day, app, 'evaluation_pass_rate', sum(passed) / nullif(sum(results), 0)
        FROM daily_evaluation_pass_rate GROUP BY day, app
    )
    WHERE day >= first_day - 28 AND day < end_day
        AND (only_app IS NULL OR only_app IN (app, split_part(app, '/', 6)))
),
baselines AS (  -- the values of the 28 days before each day: one list, whose median and MAD
    -- cost three quarters of DuckDB's windowed median and mad over the same frame
    SELECT
        day,
        app,
        metric,
        value,
        coalesce(list(value) FILTER (WHERE value IS NOT NULL) OVER baseline, []) AS baseline
    FROM daily
    WINDOW baseline AS (
        PARTITION BY app, metric ORDER BY day
        RANGE BETWEEN INTERVAL 28 DAYS PRECEDING AND INTERVAL 1 DAY PRECEDING
    )
),
scored AS (
    SELECT
        day,
        app,
        metric,
        value,
        baseline_median,
        list_median(list_transform(baseline, x -> abs(x - baseline_median))) AS baseline_mad,
        len(baseline) AS baseline_days
    FROM (SELECT *, list_median(baseline) AS baseline_median FROM baselines)
)
SELECT
    s.day,
    s.app,
    s.metric,
    s.value,
    s.baseline_median,
    s.baseline_mad,
    s.baseline_days,
    CASE WHEN s.baseline_days >= 7 AND s.spread > 0 THEN 0.6745 * (s.value - s.baseline_median) / s.spread END AS z,
    s.baseline_days >= 7 AND s.value IS NOT NULL AND (
        abs(0.6745 * (s.value - s.baseline_median) / nullif(s.spread, 0)) >= t.z
        OR (s.spread = 0 AND s.value <> s.baseline_median)
    ) AS anomalous
FROM (SELECT *, greatest(baseline_mad, 0.05 * abs(baseline_median)) AS spread FROM scored) AS s
CROSS JOIN (SELECT coalesce(max(z), 3.5) AS z FROM anomaly_threshold) AS t
WHERE s.day >= first_day AND s.day < end_day;

CREATE OR REPLACE VIEW metric_anomalies AS
SELECT * FROM metric_anomalies_in(DATE '1970-01-01', DATE '9999-12-31', NULL);
