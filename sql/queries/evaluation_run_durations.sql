-- How long each final evaluation run took (its operation's create to end time), with its app
-- version and result counts, oldest run first: the run duration trend per app.
-- Only runs whose operation was fetched (every final run's, once) have a duration.
-- rows of evaluation_runs: none before a run is loaded
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    h.create_time,
    h.day,
    h.app,
    h.evaluation_run_name,
    h.run_display_name,
    h.state,
    h.app_version_label,
    r.evaluation_type,
    r.total_count AS results,
    h.operation_create_time,
    h.operation_end_time,
    round(h.run_seconds, 3) AS run_seconds,
    round(h.run_seconds / nullif(r.total_count, 0), 3) AS seconds_per_result
FROM evaluation_run_headers AS h
JOIN evaluation_runs AS r USING (evaluation_run_name)
WHERE h.run_seconds IS NOT NULL
    AND ($app IS NULL OR $app IN (h.app, split_part(h.app, '/', 6)))
    AND h.day >= $since AND h.day < $until
ORDER BY h.create_time, h.evaluation_run_name;
