-- Remove the scores of the days of rescored_days, to compute them again.
DELETE FROM daily_metric_scores AS s
WHERE EXISTS (
    SELECT 1 FROM rescored_days AS r
    WHERE (r.app IS NULL OR r.app = s.app) AND s.day BETWEEN r.first_day AND r.last_day
);
