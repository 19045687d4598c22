-- Descriptions of tool_responses and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE tool_responses IS 'One row per toolResponse chunk. Key: (conversation_name, turn_index, message_index, chunk_index).';
COMMENT ON COLUMN tool_responses.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN tool_responses.turn_index IS '0-based position of the turn in the conversation; NULL for the deprecated top-level messages.';
COMMENT ON COLUMN tool_responses.message_index IS '0-based position of the message in its turn (or in the top-level messages).';
COMMENT ON COLUMN tool_responses.chunk_index IS '0-based position of the chunk in its message.';
COMMENT ON COLUMN tool_responses.tool_call_id IS 'Id of the tool call; a toolResponse carries the id of the toolCall it answers.';
COMMENT ON COLUMN tool_responses.tool IS 'Resource name of the tool (projects/{p}/locations/{l}/apps/{a}/tools/{t}); NULL for a toolset tool.';
COMMENT ON COLUMN tool_responses.toolset IS 'Resource name of the toolset, for a toolset tool; NULL otherwise.';
COMMENT ON COLUMN tool_responses.toolset_tool_id IS 'Id of the tool inside its toolset, for a toolset tool; NULL otherwise.';
COMMENT ON COLUMN tool_responses.display_name IS 'Display name of the tool, when the API gives one.';
COMMENT ON COLUMN tool_responses.response IS 'The whole response struct (JSON).';
COMMENT ON COLUMN tool_responses.is_error IS 'True exactly when the response struct has an error key.';
COMMENT ON COLUMN tool_responses.parent_tool_call_id IS 'Id of the tool call that made this one (an agent tool calling a sub-tool); NULL at top level.';
COMMENT ON COLUMN tool_responses.agent_name IS 'Display name of the agent that made the call.';
COMMENT ON COLUMN tool_responses.target_app IS 'Where the call went, as the API names it (e.g. PROJECT).';
COMMENT ON COLUMN tool_responses.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
