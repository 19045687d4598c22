-- Descriptions of the table daily_conversation_length and its columns, shown by BI tools.
COMMENT ON TABLE daily_conversation_length IS 'Turns per conversation and conversation duration percentiles. One row per (day, app).';
COMMENT ON COLUMN daily_conversation_length.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_conversation_length.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_conversation_length.conversations IS 'Conversations counted.';
COMMENT ON COLUMN daily_conversation_length.ended_conversations IS 'Conversations with an end_time (the duration percentiles cover these).';
COMMENT ON COLUMN daily_conversation_length.turns_avg IS 'Mean turn_count.';
COMMENT ON COLUMN daily_conversation_length.turns_p50 IS 'Median turn_count.';
COMMENT ON COLUMN daily_conversation_length.turns_p90 IS '90th percentile of turn_count.';
COMMENT ON COLUMN daily_conversation_length.turns_p99 IS '99th percentile of turn_count.';
COMMENT ON COLUMN daily_conversation_length.turns_max IS 'Largest turn_count.';
COMMENT ON COLUMN daily_conversation_length.duration_avg_seconds IS 'Mean conversation duration in seconds.';
COMMENT ON COLUMN daily_conversation_length.duration_p50_seconds IS 'Median conversation duration in seconds.';
COMMENT ON COLUMN daily_conversation_length.duration_p90_seconds IS '90th percentile conversation duration in seconds.';
COMMENT ON COLUMN daily_conversation_length.duration_p99_seconds IS '99th percentile conversation duration in seconds.';
COMMENT ON COLUMN daily_conversation_length.duration_max_seconds IS 'Longest conversation in seconds.';
