-- Descriptions of spans and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE spans IS 'One row per span of a turn''s trace (LLM, Tool, Callback, Guardrail, TTS, VAD, ...). Key: (conversation_name, turn_index, span_id).';
COMMENT ON COLUMN spans.conversation_name IS 'Full resource name of the conversation (projects/{p}/locations/{l}/apps/{a}/conversations/{c}).';
COMMENT ON COLUMN spans.turn_index IS '0-based position of the turn whose trace holds the span.';
COMMENT ON COLUMN spans.span_id IS 'Pre-order position of the span in the turn''s tree (root = 0); stable within the turn.';
COMMENT ON COLUMN spans.parent_span_id IS 'span_id of the parent span; NULL for the root.';
COMMENT ON COLUMN spans.depth IS 'Depth in the tree (root = 0).';
COMMENT ON COLUMN spans.name IS 'Span name as the API gives it, e.g. Turn, LLM, Tool, TOOL:lookup_order, AGENT:billing.';
COMMENT ON COLUMN spans.start_time IS 'Start of the span (UTC).';
COMMENT ON COLUMN spans.end_time IS 'End of the span (UTC).';
COMMENT ON COLUMN spans.duration_seconds IS 'Duration in seconds, from the span''s duration string (not end minus start).';
COMMENT ON COLUMN spans.attributes IS 'Span attributes (JSON), e.g. model and token counts for LLM spans, perceived latency (ms) on the root.';
COMMENT ON COLUMN spans.partition_date IS 'Day (UTC) of the conversation''s start: the lake partition its rows were loaded from.';
