-- Which days stand out from the weeks before them, metric by metric and app by app?
-- Grain: one row per (day, app, metric), for every daily metric the dashboard draws: conversations,
-- turn_p90_seconds (turn duration), llm_p90_seconds, tool_p90_seconds and the other components'
-- p90 (daily_component_latency), tool_error_rate, tokens (input + output), cost_usd and
-- evaluation_pass_rate (completed runs' results that passed).
-- value, baseline_median, baseline_mad and baseline_days are those of daily_metric_scores: the
-- metric's median and median absolute deviation on the 28 days before the day, kept by the loads.
-- z is the robust z-score 0.6745 x (value - baseline_median) / spread, where spread is the MAD but
-- at least 5% of the median (a metric that barely moved for weeks, as a day's p90 of a few dozen
-- conversations can, would otherwise flag ordinary moves); NULL with fewer than 7 baseline days
-- or a spread of 0 (a baseline of zeros). A day is anomalous when |z| reaches anomaly_threshold.z
-- (CES_ANOMALY_Z), or when its baseline was all zeros and the value is not. A day not over yet
-- (today, UTC) holds its totals so far: its conversations, tokens and cost are `partial`, scored
-- but never anomalous (an hourly load would flag each morning's); its percentiles and rates are
-- judged.
-- metric_anomalies_in(first_day, end_day, only_app) reads the days [first_day, end_day) of one app
-- (resource name or id; NULL: all); the view reads every day.
CREATE OR REPLACE MACRO metric_anomalies_in(first_day, end_day, only_app) AS TABLE
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
    ) AND NOT s.partial AS anomalous,
    s.partial
FROM (
    SELECT
        *,
        greatest(baseline_mad, 0.05 * abs(baseline_median)) AS spread,
        day >= CAST(timezone('UTC', now()) AS DATE) AND metric IN ('conversations', 'tokens', 'cost_usd') AS partial
    FROM daily_metric_scores
    WHERE day >= first_day AND day < end_day
        AND (only_app IS NULL OR only_app IN (app, split_part(app, '/', 6)))
) AS s
CROSS JOIN (SELECT coalesce(max(z), 3.5) AS z FROM anomaly_threshold) AS t;

CREATE OR REPLACE VIEW metric_anomalies AS
SELECT * FROM metric_anomalies_in(DATE '1970-01-01', DATE '9999-12-31', NULL);
