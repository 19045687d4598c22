-- Descriptions of the table daily_tool_calls and its columns, shown by BI tools.
COMMENT ON TABLE daily_tool_calls IS 'Tool calls, responses, errors and error rate per tool per day. One row per (day, app, tool).';
COMMENT ON COLUMN daily_tool_calls.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_tool_calls.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_tool_calls.tool IS 'Tool resource name, or {toolset}/{toolId} for a toolset tool.';
COMMENT ON COLUMN daily_tool_calls.display_name IS 'Display name of the tool, else the last segment of tool.';
COMMENT ON COLUMN daily_tool_calls.calls IS 'toolCall chunks counted.';
COMMENT ON COLUMN daily_tool_calls.responses IS 'toolResponse chunks counted.';
COMMENT ON COLUMN daily_tool_calls.errors IS 'Responses whose struct has an error key.';
COMMENT ON COLUMN daily_tool_calls.error_rate IS 'errors / responses (NULL without responses).';
