-- Tool responses and error rate per tool over the whole warehouse, most errors first.
SELECT
    tool,
    sum(responses) AS responses,
    sum(errors) AS errors,
    round(sum(errors) / sum(responses), 4) AS error_rate
FROM daily_tool_error_rate
GROUP BY tool
ORDER BY errors DESC, tool;
