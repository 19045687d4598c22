-- Descriptions of the view component_spans and its columns, shown by BI tools.
COMMENT ON VIEW component_spans IS 'Every span with the component it measures (Turn, LLM, Tool, Callback, Guardrail, TTS, VAD, Agent, Other), its subject, app and day. One row per span.';
COMMENT ON COLUMN component_spans.conversation_name IS 'Full resource name of the conversation.';
COMMENT ON COLUMN component_spans.turn_index IS '0-based position of the turn in the conversation (NULL for the deprecated top-level messages).';
COMMENT ON COLUMN component_spans.span_id IS 'Pre-order position of the span in the turn''s tree (root = 0).';
COMMENT ON COLUMN component_spans.parent_span_id IS 'span_id of the parent; NULL for the root.';
COMMENT ON COLUMN component_spans.depth IS 'Depth in the tree (root = 0).';
COMMENT ON COLUMN component_spans.app IS 'Full resource name of the app (projects/{p}/locations/{l}/apps/{a}).';
COMMENT ON COLUMN component_spans.day IS 'UTC date of the conversation''s start_time.';
COMMENT ON COLUMN component_spans.name IS 'Span name as the API gives it.';
COMMENT ON COLUMN component_spans.component IS 'Turn for the root; else LLM, Tool, Callback, Guardrail, TTS, VAD or Agent from the name or its prefix before a colon; Other for anything else.';
COMMENT ON COLUMN component_spans.subject IS 'What the span is about: the text after the prefix, else the tool or guardrail name, the LLM model or the callback stage.';
COMMENT ON COLUMN component_spans.agent IS 'The span''s agent attribute.';
COMMENT ON COLUMN component_spans.start_time IS 'Start of the span (UTC).';
COMMENT ON COLUMN component_spans.duration_seconds IS 'Duration in seconds, from the span''s duration string.';
COMMENT ON COLUMN component_spans.attributes IS 'Span attributes (JSON).';
