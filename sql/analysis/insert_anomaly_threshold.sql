-- The robust z-score beyond which metric_anomalies flags a day ($z).
INSERT INTO anomaly_threshold VALUES ($z);
