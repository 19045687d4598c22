-- Descriptions of the view evaluation_tool_trajectories and its columns, shown by BI tools.
COMMENT ON VIEW evaluation_tool_trajectories IS 'Each evaluated turn that expects tool calls, its observed calls and how they matched (exact, in_order, any_order, none). One row per (evaluation_result_name, turn_index).';
COMMENT ON COLUMN evaluation_tool_trajectories.evaluation_result_name IS 'Full resource name of the evaluation result.';
COMMENT ON COLUMN evaluation_tool_trajectories.evaluation_run_name IS 'The evaluation run it belongs to.';
COMMENT ON COLUMN evaluation_tool_trajectories.evaluation_name IS 'The evaluation it evaluates.';
COMMENT ON COLUMN evaluation_tool_trajectories.turn_index IS 'The golden turn; NULL for a scenario result''s expectations.';
COMMENT ON COLUMN evaluation_tool_trajectories.conversation_name IS 'The conversation the turn replayed (the scenario''s conversation).';
COMMENT ON COLUMN evaluation_tool_trajectories.expected IS 'The expected tools in the order of the expectations (resource name, else {toolset}/{toolId}).';
COMMENT ON COLUMN evaluation_tool_trajectories.observed IS 'The tools called, in order.';
COMMENT ON COLUMN evaluation_tool_trajectories.observed_from IS 'conversation: its tool_calls (the warehouse holds it); result: the calls the result reports.';
COMMENT ON COLUMN evaluation_tool_trajectories.tool_match IS 'exact, in_order (others between), any_order or none (an expected call missing): the strictest that holds.';
COMMENT ON COLUMN evaluation_tool_trajectories.turn_passed IS 'Every tool-call expectation of the turn passed.';
COMMENT ON COLUMN evaluation_tool_trajectories.result_status IS 'The result''s evaluation_status (PASS, FAIL, …).';
