-- Descriptions of evaluation_run_latencies and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_latencies IS 'One row per tool, callback, guardrail and LLM-call entry of a run''s latency report. Key: (evaluation_run_name, kind, entry_index).';
COMMENT ON COLUMN evaluation_run_latencies.evaluation_run_name IS 'Full resource name of the evaluation run (projects/{p}/locations/{l}/apps/{a}/evaluationRuns/{r}).';
COMMENT ON COLUMN evaluation_run_latencies.kind IS 'Entry kind: tool, callback, guardrail or llm_call.';
COMMENT ON COLUMN evaluation_run_latencies.subject IS 'What was measured: the tool''s resource name (or {toolset}/{toolId}), the callback stage, the guardrail''s resource name, or the model; two entries may share one.';
COMMENT ON COLUMN evaluation_run_latencies.display_name IS 'Display name of the tool or guardrail, when the report gives one.';
COMMENT ON COLUMN evaluation_run_latencies.p50_seconds IS 'Median latency in seconds.';
COMMENT ON COLUMN evaluation_run_latencies.p90_seconds IS '90th percentile latency in seconds.';
COMMENT ON COLUMN evaluation_run_latencies.p99_seconds IS '99th percentile latency in seconds.';
COMMENT ON COLUMN evaluation_run_latencies.call_count IS 'Calls measured.';
COMMENT ON COLUMN evaluation_run_latencies.entry_index IS 'Position of the entry in its list of the latency report (0-based): what tells apart entries of one subject.';
