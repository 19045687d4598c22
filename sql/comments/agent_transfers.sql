-- Descriptions of agent_transfers and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE agent_transfers IS 'One row per agentTransfer chunk: the conversation was handed to another agent. Key: (conversation_name, turn_index, message_index, chunk_index).';
COMMENT ON COLUMN agent_transfers.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN agent_transfers.turn_index IS '0-based position of the turn in the conversation; NULL for the deprecated top-level messages.';
COMMENT ON COLUMN agent_transfers.message_index IS '0-based position of the message in its turn (or in the top-level messages).';
COMMENT ON COLUMN agent_transfers.chunk_index IS '0-based position of the chunk in its message.';
COMMENT ON COLUMN agent_transfers.target_agent IS 'Resource name of the agent the conversation was handed to.';
COMMENT ON COLUMN agent_transfers.display_name IS 'Display name of the target agent.';
COMMENT ON COLUMN agent_transfers.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
