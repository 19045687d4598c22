-- Descriptions of the view agent_transfer_steps and its columns, shown by BI tools.
COMMENT ON VIEW agent_transfer_steps IS 'Each agent transfer with the agent it came from, in conversation order. One row per agentTransfer chunk.';
COMMENT ON COLUMN agent_transfer_steps.conversation_name IS 'Full resource name of the conversation.';
COMMENT ON COLUMN agent_transfer_steps.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN agent_transfer_steps.day IS 'UTC date of the conversation''s start_time.';
COMMENT ON COLUMN agent_transfer_steps.turn_index IS '0-based position of the turn in the conversation (NULL for the deprecated top-level messages).';
COMMENT ON COLUMN agent_transfer_steps.message_index IS '0-based position of the message.';
COMMENT ON COLUMN agent_transfer_steps.chunk_index IS '0-based position of the chunk in its message.';
COMMENT ON COLUMN agent_transfer_steps.step IS '1-based order of the transfer within its conversation (by turn, message, chunk).';
COMMENT ON COLUMN agent_transfer_steps.from_agent IS 'Agent the conversation left: the entry agent for the first transfer (NULL when unknown), else the previous transfer''s target.';
COMMENT ON COLUMN agent_transfer_steps.from_display_name IS 'Display name of from_agent when the previous transfer gave one.';
COMMENT ON COLUMN agent_transfer_steps.to_agent IS 'Resource name of the agent the conversation was handed to.';
COMMENT ON COLUMN agent_transfer_steps.to_display_name IS 'Display name of to_agent.';
