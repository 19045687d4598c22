-- The anomalous days of one app's metrics ($app) in [$since, $until), most extreme first.
SELECT day, metric, value, baseline_median, baseline_mad, z
FROM metric_anomalies_in($since, $until, $app)
WHERE anomalous
ORDER BY abs(z) DESC NULLS FIRST, day, metric;
