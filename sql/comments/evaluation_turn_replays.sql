-- Descriptions of evaluation_turn_replays and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_turn_replays IS 'One row per replayed turn of a golden evaluation result; its scores are in evaluation_scores, its expectations in evaluation_expectation_outcomes. Key: (evaluation_result_name, turn_index).';
COMMENT ON COLUMN evaluation_turn_replays.evaluation_result_name IS 'The golden result the turn belongs to.';
COMMENT ON COLUMN evaluation_turn_replays.evaluation_run_name IS 'The evaluation run that produced the result.';
COMMENT ON COLUMN evaluation_turn_replays.turn_index IS 'Position of the turn in the golden conversation (0-based).';
COMMENT ON COLUMN evaluation_turn_replays.conversation_name IS 'The EVAL conversation the turn was replayed in: join conversations, turns, tool_calls and spans on it.';
COMMENT ON COLUMN evaluation_turn_replays.turn_latency_seconds IS 'How long the agent took to answer the turn, in seconds.';
COMMENT ON COLUMN evaluation_turn_replays.error_type IS 'Why the turn could not be evaluated (EvaluationErrorInfo.ErrorType), if it could not.';
COMMENT ON COLUMN evaluation_turn_replays.error_message IS 'The error message of a turn that could not be evaluated.';
COMMENT ON COLUMN evaluation_turn_replays.error_session_id IS 'errorInfo.sessionId of the turn''s error.';
COMMENT ON COLUMN evaluation_turn_replays.user_facing_error_message IS 'errorInfo.userFacingErrorMessage of the turn''s error.';
