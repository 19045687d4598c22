-- Why evaluation results failed, with the conversation turn each failure happened in: its latency, slowest span and erroring tool call.
-- rows of evaluation_runs: none before a run is loaded
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param run VARCHAR = NULL: only this evaluation run (full resource name or run id); the app's newest completed run when unset
-- param evaluation VARCHAR = NULL: only this evaluation (full resource name or evaluation id); every evaluation when unset
WITH newest AS (
    SELECT app, max_by(evaluation_run_name, (create_time, evaluation_run_name)) AS evaluation_run_name
    FROM evaluation_runs
    WHERE state = 'COMPLETED'
    GROUP BY app
)
SELECT
    f.app,
    f.evaluation_run_name,
    f.app_version_label,
    f.evaluation_name,
    f.evaluation_result_name,
    f.failure_kind,
    f.failure,
    f.subject,
    f.score,
    f.explanation,
    f.conversation_name,
    f.conversation_day,
    f.turn_index,
    f.turn_latency_seconds,
    f.slowest_span,
    f.slowest_span_seconds,
    f.erroring_tool
FROM evaluation_failures AS f
WHERE ($app IS NULL OR $app IN (f.app, split_part(f.app, '/', 6)))
    AND (
        $run IN (f.evaluation_run_name, split_part(f.evaluation_run_name, '/', 8))
        OR ($run IS NULL AND f.evaluation_run_name IN (SELECT evaluation_run_name FROM newest))
    )
    AND ($evaluation IS NULL OR $evaluation IN (f.evaluation_name, split_part(f.evaluation_name, '/', 8)))
ORDER BY f.app, f.evaluation_name, f.evaluation_result_name, f.turn_index NULLS LAST, f.failure_kind, f.failure;
