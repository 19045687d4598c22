-- Latency percentiles (seconds) per component (LLM, Tool, Callback, Guardrail, TTS, VAD, Agent, Turn) per UTC day.
-- param component VARCHAR = NULL: only this component (e.g. LLM); every component when unset
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    component,
    count(*) AS spans,
    round(quantile_cont(duration_seconds, 0.5), 4) AS p50_seconds,
    round(quantile_cont(duration_seconds, 0.9), 4) AS p90_seconds,
    round(quantile_cont(duration_seconds, 0.99), 4) AS p99_seconds
FROM component_spans
WHERE duration_seconds IS NOT NULL
    AND ($component IS NULL OR lower(component) = lower($component))
    AND ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= $since AND day < $until
GROUP BY day, component
ORDER BY day, component;
