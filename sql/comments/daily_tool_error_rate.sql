-- Descriptions of the view daily_tool_error_rate and its columns, shown by BI tools.
COMMENT ON VIEW daily_tool_error_rate IS 'Tool responses and error rate per tool per day. One row per (day, tool).';
COMMENT ON COLUMN daily_tool_error_rate.day IS 'UTC date of the conversation''s start_time.';
COMMENT ON COLUMN daily_tool_error_rate.tool IS 'Tool resource name, or {toolset}/{toolId} for a toolset tool.';
COMMENT ON COLUMN daily_tool_error_rate.responses IS 'toolResponse chunks counted.';
COMMENT ON COLUMN daily_tool_error_rate.errors IS 'Responses whose struct has an error key.';
COMMENT ON COLUMN daily_tool_error_rate.error_rate IS 'errors / responses (NULL without responses).';
