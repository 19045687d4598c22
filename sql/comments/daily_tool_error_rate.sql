-- Descriptions of the table daily_tool_error_rate and its columns, shown by BI tools.
COMMENT ON TABLE daily_tool_error_rate IS 'Tool responses and error rate per tool per day. One row per (day, app, tool).';
COMMENT ON COLUMN daily_tool_error_rate.day IS 'UTC day of the conversation''s start_time (the day of its partition).';
COMMENT ON COLUMN daily_tool_error_rate.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN daily_tool_error_rate.tool IS 'Tool resource name, or {toolset}/{toolId} for a toolset tool.';
COMMENT ON COLUMN daily_tool_error_rate.responses IS 'toolResponse chunks counted.';
COMMENT ON COLUMN daily_tool_error_rate.errors IS 'Responses whose struct has an error key.';
COMMENT ON COLUMN daily_tool_error_rate.error_rate IS 'errors / responses (NULL without responses).';
