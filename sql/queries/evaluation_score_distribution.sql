-- Every score of the results of COMPLETED evaluation runs, with its metric and app version: the distribution of each metric per app version.
-- rows of evaluation_runs: none before a run is loaded
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    h.app,
    h.app_version_label,
    min(h.create_time) OVER (PARTITION BY h.app, h.app_version_label) AS version_first_run,
    coalesce(s.metric || ': ' || s.rubric, s.metric) AS metric,
    s.score
FROM evaluation_scores AS s
JOIN evaluation_run_headers AS h USING (evaluation_run_name)
WHERE h.state = 'COMPLETED'
    AND isfinite(s.score)
    AND ($app IS NULL OR $app IN (h.app, split_part(h.app, '/', 6)))
    AND h.day >= $since AND h.day < $until
ORDER BY h.app, version_first_run, h.app_version_label, metric, s.score;
