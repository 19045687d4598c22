-- Each evaluation run as the per-run views show it: its app, name, create_time and UTC day,
-- state and app version with a readable label.
-- Grain: one row per evaluation_run_name. app_version_label is the version's display name when
-- the run gave one, else the last segment of app_version.
CREATE OR REPLACE VIEW evaluation_run_headers AS
SELECT
    app,
    evaluation_run_name,
    display_name AS run_display_name,
    create_time,
    CAST(timezone('UTC', create_time) AS DATE) AS day,
    state,
    app_version,
    coalesce(app_version_display_name, regexp_extract(app_version, '[^/]+$')) AS app_version_label
FROM evaluation_runs;
