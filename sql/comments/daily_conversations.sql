-- Descriptions of the table daily_conversations and its columns, shown by BI tools.
COMMENT ON TABLE daily_conversations IS 'Conversations started per day by app, source, channel type and language. One row per (day, app, source, channel_type, language_code).';
COMMENT ON COLUMN daily_conversations.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_conversations.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_conversations.source IS 'Conversation source (LIVE, SIMULATOR, EVAL, AGENT_TOOL; SOURCE_UNSPECIFIED when missing).';
COMMENT ON COLUMN daily_conversations.channel_type IS 'Channel type (CHANNEL_TYPE_UNSPECIFIED when missing).';
COMMENT ON COLUMN daily_conversations.language_code IS 'Language (BCP-47; und when missing).';
COMMENT ON COLUMN daily_conversations.conversations IS 'Conversations counted.';
COMMENT ON COLUMN daily_conversations.turns IS 'Sum of turn_count as the API reports it.';
COMMENT ON COLUMN daily_conversations.in_progress IS 'Conversations without an end_time yet.';
