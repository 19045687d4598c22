-- Descriptions of evaluation_expectation_outcomes and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_expectation_outcomes IS 'One row per expectation a result checked (a golden turn''s expected tool call, response or transfer; a scenario''s expected tool call) with what was observed. Key: (evaluation_result_name, outcome_index).';
COMMENT ON COLUMN evaluation_expectation_outcomes.evaluation_result_name IS 'The result that checked the expectation.';
COMMENT ON COLUMN evaluation_expectation_outcomes.evaluation_run_name IS 'The evaluation run that produced the result.';
COMMENT ON COLUMN evaluation_expectation_outcomes.outcome_index IS 'Position of the expectation among the result''s (0-based, across its turns).';
COMMENT ON COLUMN evaluation_expectation_outcomes.turn_index IS 'The golden turn the expectation belongs to (0-based); NULL for a scenario''s.';
COMMENT ON COLUMN evaluation_expectation_outcomes.expectation_kind IS 'What was expected: tool_call, tool_response, agent_response, agent_transfer, updated_variables, mock_tool_response or no_tool_calls.';
COMMENT ON COLUMN evaluation_expectation_outcomes.expected_tool IS 'The expected tool call''s tool (its name, or toolset/toolId), if a tool call was expected.';
COMMENT ON COLUMN evaluation_expectation_outcomes.expectation IS 'The expectation as the API states it (JSON).';
COMMENT ON COLUMN evaluation_expectation_outcomes.outcome IS 'PASS, FAIL or SKIPPED (the API enum string).';
COMMENT ON COLUMN evaluation_expectation_outcomes.observed_kind IS 'What was observed instead: tool_call, tool_response, agent_response, agent_transfer or payload; NULL if nothing.';
COMMENT ON COLUMN evaluation_expectation_outcomes.observed IS 'What was observed (JSON).';
COMMENT ON COLUMN evaluation_expectation_outcomes.semantic_similarity_score IS 'Semantic similarity of the observed response to the expected one (0-4), for a response expectation.';
COMMENT ON COLUMN evaluation_expectation_outcomes.semantic_similarity_outcome IS 'Outcome of the semantic similarity check (the API enum string).';
COMMENT ON COLUMN evaluation_expectation_outcomes.parameter_correctness_score IS 'Share of the expected tool call''s parameters matched (0-1), for a tool call expectation.';
COMMENT ON COLUMN evaluation_expectation_outcomes.tool_invocation_outcome IS 'Outcome of the tool invocation check (the API enum string).';
COMMENT ON COLUMN evaluation_expectation_outcomes.tool_invocation_explanation IS 'Why the tool invocation check passed or failed.';
