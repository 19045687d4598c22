-- Descriptions of messages and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE messages IS 'One row per message. Key: (conversation_name, turn_index, message_index); turn_index is NULL for the deprecated top-level messages.';
COMMENT ON COLUMN messages.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN messages.turn_index IS '0-based position of the turn in the conversation; NULL for the deprecated top-level messages.';
COMMENT ON COLUMN messages.message_index IS '0-based position of the message in its turn (or in the top-level messages).';
COMMENT ON COLUMN messages.role IS 'Who sent the message, as the API names it (e.g. user, agent).';
COMMENT ON COLUMN messages.event_time IS 'When the message was sent (UTC).';
COMMENT ON COLUMN messages.chunk_count IS 'Chunks in the message.';
COMMENT ON COLUMN messages.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
