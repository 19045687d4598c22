-- Which component (LLM, Tool, Callback, Guardrail, TTS, VAD, Agent) does each span measure?
-- Grain: one row per span (conversation_name, turn_index, span_id), with the app and the day
-- (UTC day of the conversation's start_time: the day of its partition, which the span carries).
-- component: "Turn" for a turn's root span; otherwise the span name, or its prefix before ":"
-- (TOOL:lookup_order, AGENT:billing), matched without regard to case against LLM, Tool,
-- Callback, Guardrail, TTS, VAD and Agent; any other name is "Other". A prefixed span nested in
-- a span of the same component (TOOL:x inside Tool) is a span of its own.
-- subject: what the span is about: the text after the prefix, else the tool or guardrail "name",
-- the LLM "model" or the callback "stage" attribute. agent: the "agent" attribute.
CREATE OR REPLACE VIEW component_spans AS
WITH named AS (
    SELECT
        s.*,
        upper(trim(split_part(s.name, ':', 1))) AS prefix,
        CASE WHEN contains(s.name, ':') THEN nullif(trim(s.name[strpos(s.name, ':') + 1:]), '') END AS suffix
    FROM spans AS s
)
SELECT
    n.conversation_name,
    n.turn_index,
    n.span_id,
    n.parent_span_id,
    n.depth,
    c.app,
    n.partition_date AS day,
    n.name,
    CASE
        WHEN n.parent_span_id IS NULL THEN 'Turn'
        WHEN n.prefix = 'LLM' THEN 'LLM'
        WHEN n.prefix = 'TOOL' THEN 'Tool'
        WHEN n.prefix = 'CALLBACK' THEN 'Callback'
        WHEN n.prefix = 'GUARDRAIL' THEN 'Guardrail'
        WHEN n.prefix = 'TTS' THEN 'TTS'
        WHEN n.prefix = 'VAD' THEN 'VAD'
        WHEN n.prefix = 'AGENT' THEN 'Agent'
        ELSE 'Other'
    END AS component,
    coalesce(
        n.suffix,
        CASE n.prefix
            WHEN 'TOOL' THEN n.attributes ->> 'name'
            WHEN 'GUARDRAIL' THEN n.attributes ->> 'name'
            WHEN 'LLM' THEN n.attributes ->> 'model'
            WHEN 'CALLBACK' THEN n.attributes ->> 'stage'
        END
    ) AS subject,
    n.attributes ->> 'agent' AS agent,
    n.start_time,
    n.duration_seconds,
    n.attributes
FROM named AS n
JOIN conversations AS c USING (conversation_name);
