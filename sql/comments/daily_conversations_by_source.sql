-- Descriptions of the table daily_conversations_by_source and its columns, shown by BI tools.
COMMENT ON TABLE daily_conversations_by_source IS 'Conversations per day by app and source. One row per (day, app, source).';
COMMENT ON COLUMN daily_conversations_by_source.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_conversations_by_source.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_conversations_by_source.source IS 'Conversation source (LIVE, SIMULATOR, EVAL, AGENT_TOOL; SOURCE_UNSPECIFIED when missing).';
COMMENT ON COLUMN daily_conversations_by_source.conversations IS 'Conversations counted.';
COMMENT ON COLUMN daily_conversations_by_source.turns IS 'Sum of turn_count as the API reports it.';
COMMENT ON COLUMN daily_conversations_by_source.in_progress IS 'Conversations without an end_time yet.';
