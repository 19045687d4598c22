-- Descriptions of conversations and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE conversations IS 'One row per CES conversation, as last fetched. Key: conversation_name.';
COMMENT ON COLUMN conversations.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN conversations.app IS 'Full resource name of the app the conversation belongs to (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN conversations.conversation_id IS 'Last segment of conversation_name.';
COMMENT ON COLUMN conversations.start_time IS 'When the conversation started (UTC). Its UTC date is the partition day.';
COMMENT ON COLUMN conversations.end_time IS 'When the conversation ended (UTC); NULL while it is still in progress.';
COMMENT ON COLUMN conversations.duration_seconds IS 'end_time - start_time in seconds; NULL while the conversation has no end_time.';
COMMENT ON COLUMN conversations.turn_count IS 'Number of turns as reported by the API (0 when omitted).';
COMMENT ON COLUMN conversations.source IS 'Where the conversation came from: LIVE, SIMULATOR, EVAL or AGENT_TOOL (the API enum string).';
COMMENT ON COLUMN conversations.channel_type IS 'Channel of the conversation as the API reports it, e.g. TEXT, AUDIO, MULTIMODAL.';
COMMENT ON COLUMN conversations.input_types IS 'Input types used in the conversation, e.g. [INPUT_TYPE_TEXT, INPUT_TYPE_AUDIO].';
COMMENT ON COLUMN conversations.entry_agent IS 'Resource name of the agent the conversation started with.';
COMMENT ON COLUMN conversations.deployment IS 'Resource name of the deployment that served the conversation.';
COMMENT ON COLUMN conversations.app_version IS 'Resource name of the app version that served the conversation.';
COMMENT ON COLUMN conversations.language_code IS 'Language of the conversation (BCP-47, e.g. en-US).';
COMMENT ON COLUMN conversations.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
