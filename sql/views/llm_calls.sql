-- Which model did each LLM call use, for which agent, with how many tokens and how fast?
-- Grain: one row per LLM span (component_spans.component = 'LLM'), with its conversation, app and
-- day (the UTC day of the conversation's start_time: filter on it to read only those days).
-- The span's attributes typed: "agent" and "model" ("unknown" when absent), "input token count"
-- and "output token count" (rounded to whole tokens; NULL when absent), "time to first chunk (ms)".
-- What every token, cost and LLM latency rollup and view reads, so the attributes are read one way.
CREATE OR REPLACE VIEW llm_calls AS
SELECT
    conversation_name,
    turn_index,
    span_id,
    app,
    day,
    coalesce(agent, 'unknown') AS agent,
    coalesce(attributes ->> 'model', 'unknown') AS model,
    CAST(round(TRY_CAST(attributes ->> 'input token count' AS DOUBLE)) AS BIGINT) AS input_tokens,
    CAST(round(TRY_CAST(attributes ->> 'output token count' AS DOUBLE)) AS BIGINT) AS output_tokens,
    TRY_CAST(attributes ->> 'time to first chunk (ms)' AS DOUBLE) AS first_chunk_ms,
    duration_seconds
FROM component_spans
WHERE component = 'LLM'
