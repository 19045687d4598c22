-- Descriptions of turns and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE turns IS 'One row per turn of a conversation. Key: (conversation_name, turn_index).';
COMMENT ON COLUMN turns.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN turns.turn_index IS '0-based position of the turn in the conversation.';
COMMENT ON COLUMN turns.user_intended_text IS 'What the user meant to say, when the API gives it (simulated callers).';
COMMENT ON COLUMN turns.message_count IS 'Messages in the turn.';
COMMENT ON COLUMN turns.span_count IS 'Spans in the turn''s trace, root included (0 when the turn has no rootSpan).';
COMMENT ON COLUMN turns.start_time IS 'Start of the turn''s root span (UTC).';
COMMENT ON COLUMN turns.duration_seconds IS 'Duration of the turn''s root span in seconds, from its duration string.';
COMMENT ON COLUMN turns.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
