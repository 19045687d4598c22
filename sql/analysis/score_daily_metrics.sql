-- Score the days of rescored_days (after delete_rescored_scores.sql) into daily_metric_scores.
-- Grain: one row per (day, app, metric), for every daily metric the dashboard draws: conversations,
-- turn_p90_seconds (turn duration), llm_p90_seconds, tool_p90_seconds and the other components'
-- p90 (daily_component_latency), tool_error_rate, tokens (input + output), cost_usd and
-- evaluation_pass_rate (completed runs' results that passed).
-- baseline_median and baseline_mad (median absolute deviation) are those of the metric's values on
-- the 28 days before the day; baseline_days of them have a value. A day's values change when its
-- partition, its evaluation runs or the prices do, and its scores with those of the 28 days after:
-- a load scores again its days and the 28 after them, reading their 28 days before.
INSERT INTO daily_metric_scores BY NAME
WITH daily AS (
    SELECT m.day, m.app, m.metric, m.value, r.first_day
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
    ) AS m
    JOIN rescored_days AS r
        ON (r.app IS NULL OR r.app = m.app) AND m.day BETWEEN r.first_day - 28 AND r.last_day
),
baselines AS (  -- the values of the 28 days before each day: one list, whose median and MAD
    -- cost three quarters of DuckDB's windowed median and mad over the same frame
    SELECT
        day,
        app,
        metric,
        value,
        first_day,
        coalesce(list(value) FILTER (WHERE value IS NOT NULL) OVER baseline, []) AS baseline
    FROM daily
    WINDOW baseline AS (
        PARTITION BY app, metric ORDER BY day
        RANGE BETWEEN INTERVAL 28 DAYS PRECEDING AND INTERVAL 1 DAY PRECEDING
    )
)
SELECT
    day,
    app,
    metric,
    value,
    baseline_median,
    list_median(list_transform(baseline, x -> abs(x - baseline_median))) AS baseline_mad,
    len(baseline) AS baseline_days
FROM (SELECT *, list_median(baseline) AS baseline_median FROM baselines)
WHERE day >= first_day;
