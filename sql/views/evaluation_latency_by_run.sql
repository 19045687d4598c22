-- How fast was each tool, guardrail, callback and model in each evaluation run?
-- Grain: one row per (evaluation_run_name, kind, entry_index) of a run's latency report, with the
-- run's app, create_time, day (UTC date of create_time), state and app version.
-- kind is tool, callback, guardrail or llm_call; subject the tool's resource name (or
-- "{toolset}/{toolId}", the toolset alone without a toolId), the callback stage, the guardrail's resource name or the model; label
-- is the display name when the report gave one, else the last segment of subject.
CREATE OR REPLACE VIEW evaluation_latency_by_run AS
SELECT
    r.* EXCLUDE (operation_create_time, operation_end_time, run_seconds),
    l.kind,
    l.entry_index,
    l.subject,
    coalesce(l.display_name, regexp_extract(l.subject, '[^/]+$')) AS label,
    l.p50_seconds,
    l.p90_seconds,
    l.p99_seconds,
    l.call_count
FROM evaluation_run_latencies AS l
JOIN evaluation_run_headers AS r USING (evaluation_run_name);
