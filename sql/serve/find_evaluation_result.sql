-- The evaluation result named $name (its full resource name, else its id: two rows when that is
-- ambiguous), with its run's display name, app, state and app version label.
SELECT
    r.* EXCLUDE (evaluation_metrics_thresholds),
    h.app,
    h.run_display_name,
    h.state AS run_state,
    h.app_version_label,
    r.evaluation_metrics_thresholds
FROM evaluation_results AS r
LEFT JOIN evaluation_run_headers AS h USING (evaluation_run_name)
WHERE r.evaluation_result_name = $name
    OR (regexp_extract(r.evaluation_result_name, '[^/]+$') = $name AND NOT contains($name, '/'))
ORDER BY r.evaluation_result_name
LIMIT 2;
