-- Descriptions of the table daily_conversations_by_input_type and its columns, shown by BI tools.
COMMENT ON TABLE daily_conversations_by_input_type IS 'Conversations per day by input type; a conversation counts under each of its input types. One row per (day, app, input_type).';
COMMENT ON COLUMN daily_conversations_by_input_type.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_conversations_by_input_type.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_conversations_by_input_type.input_type IS 'Input type (INPUT_TYPE_TEXT, INPUT_TYPE_AUDIO, ...; INPUT_TYPE_UNSPECIFIED when none).';
COMMENT ON COLUMN daily_conversations_by_input_type.conversations IS 'Conversations that used the input type.';
