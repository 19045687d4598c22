-- What one app's evaluation results say that no valid result would: a score outside its
-- metric's range (semantic similarity 0-4, the others but rubrics 0-1), an outcome that is not
-- PASS, FAIL or SKIPPED (a value this version does not know), a replayed conversation that is
-- not in the warehouse. Such results are loaded with what they have; this counts them.
-- A run makes the conversations it replays, each as one of its results runs, so the warehouse
-- can hold a result's conversation only if it holds the app's conversations from the run's
-- creation to a day after the result's (runs take minutes to hours; a seeded result of the
-- simulator replays one up to a day after it began). Not looked for: those of a run created
-- before the warehouse's oldest day of the app ($loaded_from, a window not ingested), of a
-- result created later than a day before its newest conversation started ($loaded_until: a run
-- `ces-pipeline evaluate` just waited for, or one the next loads will have caught up with), of
-- an app with no conversation loaded (both NULL).
-- Returns one row: how many, and up to 10 of them.
WITH app_runs AS (
    SELECT evaluation_run_name, create_time FROM evaluation_runs WHERE app = $app
),
settled_results AS (
    SELECT evaluation_result_name FROM evaluation_results
    WHERE evaluation_run_name IN (SELECT evaluation_run_name FROM app_runs WHERE create_time >= $loaded_from)
        AND create_time <= CAST($loaded_until AS TIMESTAMPTZ) - INTERVAL 1 DAY
),
anomalies AS (
    SELECT evaluation_result_name, 'score out of range' AS anomaly, metric || ' = ' || score AS detail
    FROM evaluation_scores
    WHERE evaluation_run_name IN (SELECT evaluation_run_name FROM app_runs)
        AND isfinite(score)
        AND metric <> 'rubric'  -- a rubric's scale is the rubric's own
        AND NOT score BETWEEN 0 AND CASE WHEN metric = 'semantic_similarity' THEN 4 ELSE 1 END
    UNION ALL
    SELECT evaluation_result_name, 'unknown outcome', outcome
    FROM evaluation_expectation_outcomes
    WHERE evaluation_run_name IN (SELECT evaluation_run_name FROM app_runs)
        AND outcome NOT IN ('PASS', 'FAIL', 'SKIPPED')
    UNION ALL
    SELECT evaluation_result_name, 'conversation not loaded', conversation_name
    FROM (
        SELECT evaluation_result_name, conversation_name FROM evaluation_turn_replays
        UNION
        SELECT evaluation_result_name, conversation_name FROM evaluation_scenario_results
    ) AS replayed
    WHERE evaluation_result_name IN (SELECT evaluation_result_name FROM settled_results)
        AND conversation_name IS NOT NULL
        AND conversation_name NOT IN (  -- loaded conversations have a row there
            SELECT conversation_name FROM evaluated_conversation_turns WHERE turn_index IS NULL
        )
)
SELECT count(*) AS failures, list(struct_pack(evaluation_result_name, anomaly, detail))[1:10] AS sample
FROM anomalies;
