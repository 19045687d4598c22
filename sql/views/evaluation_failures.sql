-- Every reason an evaluation result failed, next to the conversation it replayed: a failed
-- expectation, a failed or low score (hallucinated, task not completed, user goal not met, a
-- rubric below 0.5), with that turn's latency, its slowest span (below the turn's root span) and
-- its erroring tool call.
-- Grain: one row per failing expectation outcome or score. A golden failure is tied to its
-- turn of the EVAL conversation (turn_index); a scenario's to the whole conversation (its
-- slowest span and first erroring tool call over all turns). Conversation columns are NULL
-- when the conversation is not in the warehouse (not ingested yet, or outside CES_SOURCES).
-- The conversation columns come from the rollup evaluated_conversation_turns, which the loads
-- keep: the view reads no conversation table, so it costs the evaluations, not the history.
CREATE OR REPLACE VIEW evaluation_failures AS
WITH failing AS (
    SELECT
        evaluation_result_name,
        evaluation_run_name,
        turn_index,
        'expectation' AS failure_kind,
        expectation_kind AS failure,
        coalesce(expected_tool, expected_agent) AS subject,
        coalesce(parameter_correctness_score, semantic_similarity_score) AS score,
        coalesce(tool_invocation_explanation, semantic_similarity_explanation) AS explanation
    FROM evaluation_expectation_outcomes
    WHERE outcome = 'FAIL'
    UNION ALL
    SELECT evaluation_result_name, evaluation_run_name, turn_index, 'score', metric, rubric, score, explanation
    FROM evaluation_scores
    WHERE outcome = 'FAIL'
        OR (metric = 'hallucination' AND score >= 1)
        OR (metric IN ('task_completion', 'user_goal_satisfaction') AND score < 1)
        OR (metric = 'rubric' AND score < 0.5)
    UNION ALL
    SELECT evaluation_result_name, evaluation_run_name, NULL, 'expectation_result', 'evaluation_expectation',
        prompt, NULL, explanation
    FROM evaluation_expectation_results
    WHERE outcome = 'FAIL'
),
replayed AS (  -- a golden result's conversation, for its failures of no one turn
    SELECT evaluation_result_name, min(conversation_name) AS conversation_name
    FROM evaluation_turn_replays
    GROUP BY evaluation_result_name
),
located AS (
    SELECT
        f.*,
        coalesce(t.conversation_name, s.conversation_name, g.conversation_name) AS conversation_name,
        t.turn_latency_seconds
    FROM failing AS f
    LEFT JOIN evaluation_turn_replays AS t
        ON t.evaluation_result_name = f.evaluation_result_name AND t.turn_index = f.turn_index
    LEFT JOIN evaluation_scenario_results AS s ON s.evaluation_result_name = f.evaluation_result_name
    LEFT JOIN replayed AS g ON g.evaluation_result_name = f.evaluation_result_name
)
SELECT
    h.app,
    l.evaluation_run_name,
    h.app_version_label,
    r.evaluation_name,
    l.evaluation_result_name,
    r.result_type,
    l.failure_kind,
    l.failure,
    l.subject,
    l.score,
    l.explanation,
    l.conversation_name,
    l.turn_index,
    l.turn_latency_seconds,
    c.conversation_name IS NOT NULL AS conversation_loaded,
    c.day AS conversation_day,
    ts.slowest_span,
    ts.slowest_span_seconds,
    ts.erroring_tool,
    ts.erroring_response
FROM located AS l
JOIN evaluation_results AS r USING (evaluation_result_name)
LEFT JOIN evaluation_run_headers AS h ON h.evaluation_run_name = l.evaluation_run_name
LEFT JOIN evaluated_conversation_turns AS c
    ON c.conversation_name = l.conversation_name AND c.turn_index IS NULL
-- a golden failure: its turn's row; a scenario's: the conversation-wide row (turn_index NULL)
LEFT JOIN evaluated_conversation_turns AS ts
    ON ts.conversation_name = l.conversation_name AND ts.turn_index IS NOT DISTINCT FROM l.turn_index;
