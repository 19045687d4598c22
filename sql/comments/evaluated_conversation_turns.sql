-- Descriptions of the table evaluated_conversation_turns and its columns, shown by BI tools.
COMMENT ON TABLE evaluated_conversation_turns IS 'The loaded conversations that evaluation results replayed or simulated, turn by turn, for drilling from a failure into its turn without reading the conversation tables. One row per (conversation_name, turn_index), and one per conversation with turn_index NULL for all its turns.';
COMMENT ON COLUMN evaluated_conversation_turns.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN evaluated_conversation_turns.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN evaluated_conversation_turns.conversation_name IS 'Full resource name of the conversation, as evaluation_turn_replays and evaluation_scenario_results name it.';
COMMENT ON COLUMN evaluated_conversation_turns.turn_index IS '0-based turn; NULL: the whole conversation (its row exists whenever the conversation is loaded).';
COMMENT ON COLUMN evaluated_conversation_turns.slowest_span IS 'Name of the longest span below the turn''s root span (over every turn when turn_index is NULL).';
COMMENT ON COLUMN evaluated_conversation_turns.slowest_span_seconds IS 'That span''s duration in seconds.';
COMMENT ON COLUMN evaluated_conversation_turns.erroring_tool IS 'The first tool response that was an error: its tool''s resource name, or {toolset}/{toolId}.';
COMMENT ON COLUMN evaluated_conversation_turns.erroring_response IS 'That error response''s JSON.';
COMMENT ON COLUMN evaluated_conversation_turns.tool_calls IS 'The tools called, in call order (a tool''s resource name, else {toolset}/{toolId}, else {toolset}); empty when none.';
