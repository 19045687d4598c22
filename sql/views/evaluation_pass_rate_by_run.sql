-- How well did each evaluation pass in each evaluation run, and on which app version?
-- Grain: one row per (evaluation_run_name, evaluation_name), from evaluation_run_summaries with
-- the run's app, create_time, day (UTC date of create_time), state and app version.
-- results = passed + failed + errors; pass_rate = passed / results (NULL without results):
-- an errored result counts as not passed. A run still RUNNING shows its partial summary.
CREATE OR REPLACE VIEW evaluation_pass_rate_by_run AS
SELECT
    r.* EXCLUDE (operation_create_time, operation_end_time, run_seconds),
    s.evaluation_name,
    regexp_extract(s.evaluation_name, '[^/]+$') AS evaluation_label,
    coalesce(s.passed_count, 0) AS passed,
    coalesce(s.failed_count, 0) AS failed,
    coalesce(s.error_count, 0) AS errors,
    coalesce(s.passed_count, 0) + coalesce(s.failed_count, 0) + coalesce(s.error_count, 0) AS results,
    coalesce(s.passed_count, 0)
        / nullif(coalesce(s.passed_count, 0) + coalesce(s.failed_count, 0) + coalesce(s.error_count, 0), 0)
        AS pass_rate
FROM evaluation_run_summaries AS s
JOIN evaluation_run_headers AS r USING (evaluation_run_name);
