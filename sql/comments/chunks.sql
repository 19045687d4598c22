-- Descriptions of chunks and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE chunks IS 'One row per message chunk. Key: (conversation_name, turn_index, message_index, chunk_index).';
COMMENT ON COLUMN chunks.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN chunks.turn_index IS '0-based position of the turn in the conversation; NULL for the deprecated top-level messages.';
COMMENT ON COLUMN chunks.message_index IS '0-based position of the message in its turn (or in the top-level messages).';
COMMENT ON COLUMN chunks.chunk_index IS '0-based position of the chunk in its message.';
COMMENT ON COLUMN chunks.chunk_type IS 'Kind of chunk: text, transcript, blob, payload, image, tool_call, tool_response, agent_transfer, updated_variables or default_variables.';
COMMENT ON COLUMN chunks.text IS 'The text of a text or transcript chunk.';
COMMENT ON COLUMN chunks.mime_type IS 'MIME type of a blob or image chunk.';
COMMENT ON COLUMN chunks.data_bytes IS 'Decoded size in bytes of a blob or image chunk''s data (the bytes are not stored).';
COMMENT ON COLUMN chunks.alt_text IS 'Alternative text of an image chunk.';
COMMENT ON COLUMN chunks.payload IS 'JSON of a payload, updated_variables or default_variables chunk.';
COMMENT ON COLUMN chunks.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
