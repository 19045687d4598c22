-- Pass rate per evaluation in each COMPLETED evaluation run, with its app version, oldest run first.
-- pass_rate = passed / (passed + failed + errors); an errored result counts as not passed.
-- rows of evaluation_runs: none before a run is loaded
-- param evaluation VARCHAR = NULL: only this evaluation (resource name or id); every evaluation when unset
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    create_time,
    day,
    app,
    evaluation_run_name,
    run_display_name,
    app_version,
    app_version_label,
    evaluation_name,
    evaluation_label,
    passed,
    failed,
    errors,
    round(pass_rate, 4) AS pass_rate
FROM evaluation_pass_rate_by_run
WHERE state = 'COMPLETED'
    AND ($evaluation IS NULL OR $evaluation IN (evaluation_name, evaluation_label))
    AND ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= $since AND day < $until
ORDER BY create_time, evaluation_run_name, evaluation_label;
