-- Latency percentiles (seconds) per component (LLM, Tool, Callback, Guardrail, TTS, VAD, Agent, Turn) per UTC day and app.
-- Percentiles are exact over each app's day (read from the daily_component_latency rollup).
-- param component VARCHAR = NULL: only this component (e.g. LLM); every component when unset
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    app,
    component,
    spans,
    round(p50_seconds, 4) AS p50_seconds,
    round(p90_seconds, 4) AS p90_seconds,
    round(p99_seconds, 4) AS p99_seconds
FROM daily_component_latency
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
    AND ($component IS NULL OR lower(component) = lower($component))
ORDER BY day, app, component;
