-- Descriptions of the table daily_notable_conversations and its columns, shown by BI tools.
COMMENT ON TABLE daily_notable_conversations IS 'Each app-day''s 3 slowest conversations and 3 with the most erroring tool calls, whose traces are worth a look. One row per (day, app, kind, rank).';
COMMENT ON COLUMN daily_notable_conversations.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_notable_conversations.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_notable_conversations.kind IS 'slowest (by duration, ended conversations) or failing (by erroring tool responses).';
COMMENT ON COLUMN daily_notable_conversations.rank IS '1 to 3 within the app-day and kind.';
COMMENT ON COLUMN daily_notable_conversations.conversation_name IS 'Full resource name of the conversation.';
COMMENT ON COLUMN daily_notable_conversations.duration_seconds IS 'The conversation''s duration in seconds; NULL while it is open.';
COMMENT ON COLUMN daily_notable_conversations.turn_count IS 'The conversation''s turns, as the API reports them.';
COMMENT ON COLUMN daily_notable_conversations.erroring_tool_calls IS 'Its tool responses that were errors.';
