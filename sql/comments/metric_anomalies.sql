-- Descriptions of the view metric_anomalies and its columns, shown by BI tools.
COMMENT ON VIEW metric_anomalies IS 'Every daily metric of the dashboard per app against its 28 days before: robust z-score and whether the day is anomalous (|z| >= CES_ANOMALY_Z). One row per (day, app, metric).';
COMMENT ON COLUMN metric_anomalies.day IS 'UTC day.';
COMMENT ON COLUMN metric_anomalies.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN metric_anomalies.metric IS 'conversations, turn_p90_seconds, <component>_p90_seconds, tool_error_rate, tokens, cost_usd or evaluation_pass_rate.';
COMMENT ON COLUMN metric_anomalies.value IS 'The metric''s value that day.';
COMMENT ON COLUMN metric_anomalies.baseline_median IS 'Median of its values on the 28 days before.';
COMMENT ON COLUMN metric_anomalies.baseline_mad IS 'Median absolute deviation of those values.';
COMMENT ON COLUMN metric_anomalies.baseline_days IS 'Days of the 28 before with a value.';
COMMENT ON COLUMN metric_anomalies.z IS '0.6745 x (value - baseline_median) / spread, the spread being baseline_mad but at least 5% of |baseline_median|; NULL with fewer than 7 baseline days or a spread of 0.';
COMMENT ON COLUMN metric_anomalies.anomalous IS '|z| >= anomaly_threshold.z, or a baseline of zeros and a value that is not zero; never for a partial value.';
COMMENT ON COLUMN metric_anomalies.partial IS 'A total of a day not over yet (today, UTC: conversations, tokens, cost_usd so far): scored, never anomalous, left out of what_changed''s means.';
