-- Descriptions of evaluation_scenario_results and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_scenario_results IS 'One row per scenario evaluation result: the task, the simulated user''s facts and the verdicts on the whole conversation; its scores are in evaluation_scores. Key: evaluation_result_name.';
COMMENT ON COLUMN evaluation_scenario_results.evaluation_result_name IS 'The scenario result.';
COMMENT ON COLUMN evaluation_scenario_results.evaluation_run_name IS 'The evaluation run that produced the result.';
COMMENT ON COLUMN evaluation_scenario_results.conversation_name IS 'The EVAL conversation the scenario produced: join conversations, turns, tool_calls and spans on it.';
COMMENT ON COLUMN evaluation_scenario_results.task IS 'The task the simulated user was given.';
COMMENT ON COLUMN evaluation_scenario_results.user_facts IS 'The facts the simulated user knew (a JSON array of {name, value}).';
COMMENT ON COLUMN evaluation_scenario_results.all_expectations_satisfied IS 'Whether every expectation of the scenario was satisfied.';
COMMENT ON COLUMN evaluation_scenario_results.task_completed IS 'Whether the simulated user completed the task.';
