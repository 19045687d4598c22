-- Did each evaluated turn call the tools its expectations name, and in their order?
-- Grain: one row per (evaluation_result_name, turn_index) with at least one tool_call expectation
-- (turn_index NULL: a scenario result's expectations, over its whole conversation).
-- expected: the expected tools in the order of the expectations (a tool's resource name, else
-- {toolset}/{toolId}); observed: the tools the replayed conversation called in that turn (in every
-- turn for a scenario) from tool_calls when the warehouse holds that conversation (on the days
-- its run's conversations can start: the day before the run was created to its last fetch)
-- (observed_from = 'conversation'), else those the result reports for its expectations
-- ('result'). tool_match is the strictest that holds: exact (the same calls in the same order),
-- in_order (every expected call, in order, with others between), any_order (every expected call,
-- as often, in another order) or none (an expected call is missing). turn_passed: every tool-call
-- expectation of the turn passed; result_status: the result's evaluation_status.
CREATE OR REPLACE VIEW evaluation_tool_trajectories AS
WITH expected AS (
    SELECT
        evaluation_result_name,
        any_value(evaluation_run_name) AS evaluation_run_name,
        turn_index,
        list(expected_tool ORDER BY outcome_index) AS expected,
        list(observed_tool ORDER BY outcome_index) FILTER (WHERE observed_tool IS NOT NULL) AS reported,
        bool_and(outcome = 'PASS') AS turn_passed
    FROM evaluation_expectation_outcomes
    WHERE expectation_kind = 'tool_call' AND expected_tool IS NOT NULL
    GROUP BY evaluation_result_name, turn_index
),
replayed AS (
    SELECT
        e.evaluation_result_name,
        e.turn_index,
        coalesce(t.conversation_name, s.conversation_name) AS conversation_name
    FROM expected AS e
    LEFT JOIN evaluation_turn_replays AS t
        ON t.evaluation_result_name = e.evaluation_result_name AND t.turn_index = e.turn_index
    LEFT JOIN evaluation_scenario_results AS s
        ON s.evaluation_result_name = e.evaluation_result_name AND e.turn_index IS NULL
),
run_days AS (  -- the days the runs' conversations can start on (the day before a run's creation,
    -- for clocks' skew, to the day it was last fetched): only those days' parts are read
    SELECT coalesce(min(CAST(timezone('UTC', create_time) AS DATE)) - 1, DATE '9999-12-31') AS first_day,
        coalesce(max(CAST(timezone('UTC', observed_at) AS DATE)), DATE '0001-01-01') AS last_day
    FROM evaluation_runs SEMI JOIN expected USING (evaluation_run_name)
),
held AS (
    SELECT r.evaluation_result_name, r.turn_index, r.conversation_name
    FROM replayed AS r
    SEMI JOIN (
        SELECT conversation_name FROM conversations
        WHERE partition_date BETWEEN (SELECT first_day FROM run_days) AND (SELECT last_day FROM run_days)
    ) AS c USING (conversation_name)
),
called AS (
    SELECT
        h.evaluation_result_name,
        h.turn_index,
        list(
            coalesce(c.tool, c.toolset || '/' || c.toolset_tool_id, c.toolset)
            ORDER BY c.turn_index, c.message_index, c.chunk_index
        ) AS calls
    FROM held AS h
    JOIN tool_calls AS c
        ON c.conversation_name = h.conversation_name AND (h.turn_index IS NULL OR c.turn_index = h.turn_index)
    WHERE c.partition_date BETWEEN (SELECT first_day FROM run_days) AND (SELECT last_day FROM run_days)
    GROUP BY h.evaluation_result_name, h.turn_index
),
compared AS (
    SELECT
        e.evaluation_result_name,
        e.evaluation_run_name,
        e.turn_index,
        r.conversation_name,
        e.expected,
        CASE WHEN h.conversation_name IS NOT NULL THEN coalesce(c.calls, []) ELSE coalesce(e.reported, []) END
            AS observed,
        CASE WHEN h.conversation_name IS NOT NULL THEN 'conversation' ELSE 'result' END AS observed_from,
        e.turn_passed
    FROM expected AS e
    LEFT JOIN replayed AS r USING (evaluation_result_name, turn_index)
    LEFT JOIN held AS h USING (evaluation_result_name, turn_index)
    LEFT JOIN called AS c USING (evaluation_result_name, turn_index)
)
SELECT
    x.evaluation_result_name,
    x.evaluation_run_name,
    res.evaluation_name,
    x.turn_index,
    x.conversation_name,
    x.expected,
    x.observed,
    x.observed_from,
    CASE
        WHEN x.observed = x.expected THEN 'exact'
        WHEN regexp_matches(
            array_to_string(list_transform(x.observed, call -> chr(30) || call || chr(31)), ''),
            array_to_string(list_transform(x.expected, call -> chr(30) || regexp_escape(call) || chr(31)), '.*')
        ) THEN 'in_order'
        WHEN regexp_matches(
            array_to_string(list_transform(list_sort(x.observed), call -> chr(30) || call || chr(31)), ''),
            array_to_string(list_transform(list_sort(x.expected), call -> chr(30) || regexp_escape(call) || chr(31)), '.*')
        ) THEN 'any_order'
        ELSE 'none'
    END AS tool_match,
    x.turn_passed,
    res.evaluation_status AS result_status
FROM compared AS x
LEFT JOIN evaluation_results AS res USING (evaluation_result_name)
