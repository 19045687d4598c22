-- Descriptions of tool_calls and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE tool_calls IS 'One row per toolCall chunk. Key: (conversation_name, turn_index, message_index, chunk_index).';
COMMENT ON COLUMN tool_calls.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN tool_calls.turn_index IS '0-based position of the turn in the conversation; NULL for the deprecated top-level messages.';
COMMENT ON COLUMN tool_calls.message_index IS '0-based position of the message in its turn (or in the top-level messages).';
COMMENT ON COLUMN tool_calls.chunk_index IS '0-based position of the chunk in its message.';
COMMENT ON COLUMN tool_calls.tool_call_id IS 'Id of the tool call; a toolResponse carries the id of the toolCall it answers.';
COMMENT ON COLUMN tool_calls.tool IS 'Resource name of the tool (projects/{p}/locations/{l}/apps/{a}/tools/{t}); NULL for a toolset tool.';
COMMENT ON COLUMN tool_calls.toolset IS 'Resource name of the toolset, for a toolset tool; NULL otherwise.';
COMMENT ON COLUMN tool_calls.toolset_tool_id IS 'Id of the tool inside its toolset, for a toolset tool; NULL otherwise.';
COMMENT ON COLUMN tool_calls.display_name IS 'Display name of the tool, when the API gives one.';
COMMENT ON COLUMN tool_calls.args IS 'Arguments of the call (JSON).';
COMMENT ON COLUMN tool_calls.parent_tool_call_id IS 'Id of the tool call that made this one (an agent tool calling a sub-tool); NULL at top level.';
COMMENT ON COLUMN tool_calls.agent_name IS 'Display name of the agent that made the call.';
COMMENT ON COLUMN tool_calls.target_app IS 'Where the call went, as the API names it (e.g. PROJECT).';
COMMENT ON COLUMN tool_calls.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
