-- Descriptions of the view evaluation_pass_rate_by_run and its columns, shown by BI tools.
COMMENT ON VIEW evaluation_pass_rate_by_run IS 'Pass rate of each evaluation in each evaluation run, with the run''s app version. One row per (evaluation_run_name, evaluation_name).';
COMMENT ON COLUMN evaluation_pass_rate_by_run.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN evaluation_pass_rate_by_run.evaluation_run_name IS 'Full resource name of the evaluation run.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.run_display_name IS 'Display name of the evaluation run.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.create_time IS 'When the evaluation run was created (UTC).';
COMMENT ON COLUMN evaluation_pass_rate_by_run.day IS 'UTC date of the evaluation run''s create_time.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.state IS 'State of the evaluation run (QUEUED, RUNNING, COMPLETED, ...).';
COMMENT ON COLUMN evaluation_pass_rate_by_run.app_version IS 'Resource name of the app version evaluated.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.app_version_label IS 'Display name of the app version, else the last segment of app_version.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.evaluation_name IS 'Resource name of the evaluation.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.evaluation_label IS 'Last segment of evaluation_name (the evaluation id).';
COMMENT ON COLUMN evaluation_pass_rate_by_run.passed IS 'Results that passed.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.failed IS 'Results that failed.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.errors IS 'Results that errored.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.results IS 'passed + failed + errors.';
COMMENT ON COLUMN evaluation_pass_rate_by_run.pass_rate IS 'passed / results (NULL without results); an errored result counts as not passed.';
