-- Days whose metrics stand out from the 28 days before them (robust z-score beyond CES_ANOMALY_Z), most extreme first.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
-- param metric VARCHAR = NULL: only this metric (conversations, turn_p90_seconds, llm_p90_seconds, tool_error_rate, tokens, cost_usd, evaluation_pass_rate, …)
SELECT
    day,
    app,
    metric,
    round(value, 6) AS value,
    round(baseline_median, 6) AS baseline_median,
    round(baseline_mad, 6) AS baseline_mad,
    baseline_days,
    round(z, 2) AS z
FROM metric_anomalies_in(window_start($since, $until), $until, $app)
WHERE anomalous AND ($metric IS NULL OR metric = $metric)
ORDER BY abs(z) DESC NULLS FIRST, day, app, metric;
