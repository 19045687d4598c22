-- Each daily metric of one app ($app) over [$since, $until) against the period of the same length
-- before it ([$before, $since)): the mean of its daily values in each, from metric_anomalies_in,
-- without a day's total so far (`partial`: today's conversations, tokens and cost).
SELECT
    metric,
    avg(value) FILTER (WHERE day >= $since) AS current,
    avg(value) FILTER (WHERE day < $since) AS previous,
    count(value) FILTER (WHERE day >= $since) AS current_days,
    count(value) FILTER (WHERE day < $since) AS previous_days
FROM metric_anomalies_in($before, $until, $app)
WHERE NOT partial
GROUP BY metric
ORDER BY metric;
