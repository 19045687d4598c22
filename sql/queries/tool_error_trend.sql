-- Tool calls, errors and error rate per tool per UTC day, with the tool's app.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    day,
    app,
    tool,
    any_value(display_name) AS display_name,
    CAST(sum(calls) AS BIGINT) AS calls,
    CAST(sum(responses) AS BIGINT) AS responses,
    CAST(sum(errors) AS BIGINT) AS errors,
    round(sum(errors) / nullif(sum(responses), 0), 4) AS error_rate
FROM daily_tool_calls
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= window_start($since, $until) AND day < $until
GROUP BY day, app, tool
ORDER BY day, app, tool;
