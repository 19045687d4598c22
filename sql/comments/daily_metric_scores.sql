-- Descriptions of the table daily_metric_scores and its columns, shown by BI tools.
COMMENT ON TABLE daily_metric_scores IS 'Every daily metric of the dashboard per app with the median and MAD of its 28 days before, kept by each load: what metric_anomalies scores. One row per (day, app, metric).';
COMMENT ON COLUMN daily_metric_scores.day IS 'UTC day.';
COMMENT ON COLUMN daily_metric_scores.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_metric_scores.metric IS 'conversations, turn_p90_seconds, <component>_p90_seconds, tool_error_rate, tokens, cost_usd or evaluation_pass_rate.';
COMMENT ON COLUMN daily_metric_scores.value IS 'The metric''s value that day.';
COMMENT ON COLUMN daily_metric_scores.baseline_median IS 'Median of its values on the 28 days before.';
COMMENT ON COLUMN daily_metric_scores.baseline_mad IS 'Median absolute deviation of those values.';
COMMENT ON COLUMN daily_metric_scores.baseline_days IS 'Days of the 28 before with a value.';
