-- Descriptions of the view evaluation_latency_by_run and its columns, shown by BI tools.
COMMENT ON VIEW evaluation_latency_by_run IS 'Latency percentiles per tool, callback, guardrail and model of every evaluation run. One row per (evaluation_run_name, kind, subject).';
COMMENT ON COLUMN evaluation_latency_by_run.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN evaluation_latency_by_run.evaluation_run_name IS 'Full resource name of the evaluation run.';
COMMENT ON COLUMN evaluation_latency_by_run.run_display_name IS 'Display name of the evaluation run.';
COMMENT ON COLUMN evaluation_latency_by_run.create_time IS 'When the evaluation run was created (UTC).';
COMMENT ON COLUMN evaluation_latency_by_run.day IS 'UTC date of the evaluation run''s create_time.';
COMMENT ON COLUMN evaluation_latency_by_run.state IS 'State of the evaluation run (QUEUED, RUNNING, COMPLETED, ...).';
COMMENT ON COLUMN evaluation_latency_by_run.app_version IS 'Resource name of the app version evaluated.';
COMMENT ON COLUMN evaluation_latency_by_run.app_version_label IS 'Display name of the app version, else the last segment of app_version.';
COMMENT ON COLUMN evaluation_latency_by_run.kind IS 'tool, callback, guardrail or llm_call.';
COMMENT ON COLUMN evaluation_latency_by_run.subject IS 'Tool resource name (or {toolset}/{toolId}), callback stage, guardrail resource name, or model.';
COMMENT ON COLUMN evaluation_latency_by_run.label IS 'Display name of the subject, else the last segment of subject.';
COMMENT ON COLUMN evaluation_latency_by_run.p50_seconds IS 'Median latency in seconds, as the run''s latency report gives it.';
COMMENT ON COLUMN evaluation_latency_by_run.p90_seconds IS '90th percentile latency in seconds, as reported.';
COMMENT ON COLUMN evaluation_latency_by_run.p99_seconds IS '99th percentile latency in seconds, as reported.';
COMMENT ON COLUMN evaluation_latency_by_run.call_count IS 'Calls measured.';
COMMENT ON COLUMN evaluation_latency_by_run.entry_index IS 'Position of the entry in its list of the run''s latency report (0-based).';
