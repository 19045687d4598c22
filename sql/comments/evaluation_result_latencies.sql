-- Descriptions of evaluation_result_latencies and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_result_latencies IS 'One row per timed tool call or span of a result (per turn of a golden result). Key: (evaluation_result_name, latency_index).';
COMMENT ON COLUMN evaluation_result_latencies.evaluation_result_name IS 'The result timed.';
COMMENT ON COLUMN evaluation_result_latencies.evaluation_run_name IS 'The evaluation run that produced the result.';
COMMENT ON COLUMN evaluation_result_latencies.latency_index IS 'Position of the entry among the result''s (0-based, across its turns).';
COMMENT ON COLUMN evaluation_result_latencies.turn_index IS 'The golden turn timed (0-based); NULL for a scenario''s entries.';
COMMENT ON COLUMN evaluation_result_latencies.kind IS 'tool_call (toolCallLatencies) or span (spanLatencies).';
COMMENT ON COLUMN evaluation_result_latencies.span_type IS 'A span''s type: TOOL, USER_CALLBACK, GUARDRAIL or LLM (the API enum string); NULL for a tool call.';
COMMENT ON COLUMN evaluation_result_latencies.subject IS 'What was timed: the tool, resource, model, callback stage or toolset/toolId.';
COMMENT ON COLUMN evaluation_result_latencies.display_name IS 'Display name of what was timed.';
COMMENT ON COLUMN evaluation_result_latencies.start_time IS 'When it started (UTC).';
COMMENT ON COLUMN evaluation_result_latencies.end_time IS 'When it ended (UTC).';
COMMENT ON COLUMN evaluation_result_latencies.latency_seconds IS 'How long it took, in seconds.';
