-- Descriptions of the view daily_evaluation_pass_rate and its columns, shown by BI tools.
COMMENT ON VIEW daily_evaluation_pass_rate IS 'Pass rate per evaluation per app version per day, over COMPLETED runs. One row per (day, app, app_version, evaluation_name).';
COMMENT ON COLUMN daily_evaluation_pass_rate.day IS 'UTC date of the evaluation run''s create_time.';
COMMENT ON COLUMN daily_evaluation_pass_rate.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_evaluation_pass_rate.app_version IS 'Resource name of the app version evaluated.';
COMMENT ON COLUMN daily_evaluation_pass_rate.app_version_label IS 'Display name of the app version, else the last segment of app_version.';
COMMENT ON COLUMN daily_evaluation_pass_rate.evaluation_name IS 'Resource name of the evaluation.';
COMMENT ON COLUMN daily_evaluation_pass_rate.evaluation_label IS 'Last segment of evaluation_name (the evaluation id).';
COMMENT ON COLUMN daily_evaluation_pass_rate.runs IS 'COMPLETED runs counted.';
COMMENT ON COLUMN daily_evaluation_pass_rate.passed IS 'Results that passed.';
COMMENT ON COLUMN daily_evaluation_pass_rate.failed IS 'Results that failed.';
COMMENT ON COLUMN daily_evaluation_pass_rate.errors IS 'Results that errored.';
COMMENT ON COLUMN daily_evaluation_pass_rate.results IS 'passed + failed + errors.';
COMMENT ON COLUMN daily_evaluation_pass_rate.pass_rate IS 'passed / results over the day''s completed runs (NULL without results).';
