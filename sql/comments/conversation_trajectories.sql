-- Descriptions of the view conversation_trajectories and its columns, shown by BI tools.
COMMENT ON VIEW conversation_trajectories IS 'Each conversation''s tool calls and agent transfers in order (its trajectory). One row per conversation; filter on day to read only those days.';
COMMENT ON COLUMN conversation_trajectories.conversation_name IS 'Full resource name of the conversation.';
COMMENT ON COLUMN conversation_trajectories.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN conversation_trajectories.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN conversation_trajectories.steps IS 'Tool calls by display name (else toolset tool id, else tool id) and transfers as transfer:<agent display name or id>, ordered by turn, message and chunk.';
COMMENT ON COLUMN conversation_trajectories.trajectory IS 'The steps joined by " > "; empty for a conversation without tool calls or transfers.';
COMMENT ON COLUMN conversation_trajectories.tool_calls IS 'Tool calls the conversation made.';
COMMENT ON COLUMN conversation_trajectories.transfers IS 'Agent transfers the conversation made.';
COMMENT ON COLUMN conversation_trajectories.turn_count IS 'Turns of the conversation.';
COMMENT ON COLUMN conversation_trajectories.duration_seconds IS 'end_time - start_time in seconds (NULL while open).';
