-- Descriptions of the table anomaly_threshold and its column, shown by BI tools.
COMMENT ON TABLE anomaly_threshold IS 'The robust z-score beyond which metric_anomalies flags a day (CES_ANOMALY_Z); written by each load. One row.';
COMMENT ON COLUMN anomaly_threshold.z IS 'The threshold on |z|.';
