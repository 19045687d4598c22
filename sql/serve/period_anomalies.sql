-- The anomalous days of one app's metrics ($app) in [$since, $until), most extreme first.
SELECT day, metric, value, baseline_median, baseline_mad, z
FROM metric_anomalies
WHERE anomalous AND app = $app AND day >= $since AND day < $until
ORDER BY abs(z) DESC NULLS FIRST, day, metric;
