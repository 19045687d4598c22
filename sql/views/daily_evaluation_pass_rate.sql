-- Is each evaluation passing more or less often on each app version, day by day?
-- Grain: one row per (day, app, app_version, evaluation_name); day is the UTC date of the run's
-- create_time. Only COMPLETED runs count. pass_rate = passed / results over those runs, where
-- results = passed + failed + errors (an errored result counts as not passed).
CREATE OR REPLACE VIEW daily_evaluation_pass_rate AS
SELECT
    day,
    app,
    app_version,
    max(app_version_label) AS app_version_label,
    evaluation_name,
    max(evaluation_label) AS evaluation_label,
    count(*) AS runs,
    CAST(sum(passed) AS BIGINT) AS passed,
    CAST(sum(failed) AS BIGINT) AS failed,
    CAST(sum(errors) AS BIGINT) AS errors,
    CAST(sum(results) AS BIGINT) AS results,
    sum(passed) / nullif(sum(results), 0) AS pass_rate
FROM evaluation_pass_rate_by_run
WHERE state = 'COMPLETED'
GROUP BY day, app, app_version, evaluation_name;
