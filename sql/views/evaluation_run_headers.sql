-- Each evaluation run as the per-run views show it: its app, name, create_time and UTC day,
-- state and app version with a readable label, and how long it ran.
-- Grain: one row per evaluation_run_name. app_version_label is the version's display name when
-- the run gave one, else the last segment of app_version. The run's duration comes from its
-- operation (create to end time), known once the run is final and its operation fetched.
CREATE OR REPLACE VIEW evaluation_run_headers AS
SELECT
    r.app,
    r.evaluation_run_name,
    r.display_name AS run_display_name,
    r.create_time,
    CAST(timezone('UTC', r.create_time) AS DATE) AS day,
    r.state,
    r.app_version,
    coalesce(r.app_version_display_name, regexp_extract(r.app_version, '[^/]+$')) AS app_version_label,
    o.create_time AS operation_create_time,
    o.end_time AS operation_end_time,
    (epoch_us(o.end_time) - epoch_us(o.create_time)) / 1e6 AS run_seconds
FROM evaluation_runs AS r
LEFT JOIN evaluation_run_operations AS o USING (evaluation_run_name);
