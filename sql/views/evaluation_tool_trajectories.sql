-- Did each evaluated turn call the tools its expectations name, and in their order?
-- Grain: one row per (evaluation_result_name, turn_index) with at least one tool_call expectation
-- (turn_index NULL: a scenario result's expectations, over its whole conversation).
-- expected: the expected tools in the order of the expectations (a tool's resource name, else
-- {toolset}/{toolId}); observed: the tools the replayed conversation called in that turn (in every
-- turn for a scenario) from its tool calls when the warehouse holds that conversation
-- (observed_from = 'conversation'; read from the rollup evaluated_conversation_turns, not from the
-- conversation tables), else those the result reports for its expectations ('result'). tool_match is the strictest that holds: exact (the same calls in the same order),
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
    SELECT e.*, coalesce(t.conversation_name, s.conversation_name) AS conversation_name
    FROM expected AS e
    LEFT JOIN evaluation_turn_replays AS t
        ON t.evaluation_result_name = e.evaluation_result_name AND t.turn_index = e.turn_index
    LEFT JOIN evaluation_scenario_results AS s
        ON s.evaluation_result_name = e.evaluation_result_name AND e.turn_index IS NULL
),
compared AS (  -- w: the conversation when loaded; c: its calls in that turn (in every turn: turn_index NULL)
    SELECT
        r.evaluation_result_name,
        r.evaluation_run_name,
        r.turn_index,
        r.conversation_name,
        r.expected,
        CASE WHEN w.day IS NOT NULL THEN coalesce(c.tool_calls, []) ELSE coalesce(r.reported, []) END AS observed,
        CASE WHEN w.day IS NOT NULL THEN 'conversation' ELSE 'result' END AS observed_from,
        r.turn_passed
    FROM replayed AS r
    LEFT JOIN evaluated_conversation_turns AS w ON w.conversation_name = r.conversation_name AND w.turn_index IS NULL
    LEFT JOIN evaluated_conversation_turns AS c
        ON c.conversation_name = r.conversation_name AND c.turn_index IS NOT DISTINCT FROM r.turn_index
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
