-- Descriptions of the view evaluation_run_headers and its columns, shown by BI tools.
COMMENT ON VIEW evaluation_run_headers IS 'Every evaluation run with its UTC day, a readable app version label and how long it ran: the run columns of the per-run evaluation views. One row per evaluation_run_name.';
COMMENT ON COLUMN evaluation_run_headers.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN evaluation_run_headers.evaluation_run_name IS 'Full resource name of the evaluation run.';
COMMENT ON COLUMN evaluation_run_headers.run_display_name IS 'Display name of the evaluation run.';
COMMENT ON COLUMN evaluation_run_headers.create_time IS 'When the evaluation run was created (UTC).';
COMMENT ON COLUMN evaluation_run_headers.day IS 'UTC date of the evaluation run''s create_time.';
COMMENT ON COLUMN evaluation_run_headers.state IS 'State of the evaluation run (QUEUED, RUNNING, COMPLETED, ...).';
COMMENT ON COLUMN evaluation_run_headers.app_version IS 'Resource name of the app version evaluated.';
COMMENT ON COLUMN evaluation_run_headers.app_version_label IS 'Display name of the app version, else the last segment of app_version.';
COMMENT ON COLUMN evaluation_run_headers.operation_create_time IS 'When the run''s operation was created (UTC); NULL until the operation is fetched.';
COMMENT ON COLUMN evaluation_run_headers.operation_end_time IS 'When the run''s operation ended (UTC); NULL while the run is not final or its operation was not fetched.';
COMMENT ON COLUMN evaluation_run_headers.run_seconds IS 'How long the run took: operation end minus create time, in seconds.';
