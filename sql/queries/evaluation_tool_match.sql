-- How evaluated turns that expect tool calls matched them (exact, in order, any order, none), and how often such turns and their results passed.
-- rows of evaluation_runs: none before a run is loaded
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param evaluation VARCHAR = NULL: only this evaluation (resource name or id); every evaluation when unset
SELECT
    tool_match,
    count(*) AS turns,
    count(*) FILTER (WHERE turn_passed) AS turns_passed,
    round(count(*) FILTER (WHERE turn_passed) / count(*), 4) AS turn_pass_rate,
    count(DISTINCT evaluation_result_name) AS results,
    count(DISTINCT evaluation_result_name) FILTER (WHERE result_status = 'PASS') AS results_passed,
    round(count(DISTINCT evaluation_result_name) FILTER (WHERE result_status = 'PASS')
        / count(DISTINCT evaluation_result_name), 4) AS result_pass_rate
FROM evaluation_tool_trajectories
WHERE ($app IS NULL OR $app IN (split_part(evaluation_result_name, '/evaluations/', 1),
        split_part(split_part(evaluation_result_name, '/evaluations/', 1), '/', 6)))
    AND ($evaluation IS NULL OR $evaluation IN (evaluation_name, split_part(evaluation_name, '/', -1)))
GROUP BY tool_match
ORDER BY array_position(['exact', 'in_order', 'any_order', 'none'], tool_match);
