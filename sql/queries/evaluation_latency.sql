-- p50/p90/p99 latency (seconds) per tool, callback, guardrail and model across COMPLETED evaluation runs.
-- rows of evaluation_runs: none before a run is loaded
-- param kind CHOICE(tool|callback|guardrail|llm_call) = NULL: only this kind of subject; every kind when unset
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    create_time,
    day,
    app,
    evaluation_run_name,
    app_version_label,
    kind,
    subject,
    label,
    p50_seconds,
    p90_seconds,
    p99_seconds,
    call_count
FROM evaluation_latency_by_run
WHERE state = 'COMPLETED'
    AND ($kind IS NULL OR kind = $kind)
    AND ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= $since AND day < $until
ORDER BY create_time, evaluation_run_name, kind, label, entry_index;
