-- Before the settings are written again.
DELETE FROM model_prices;
DELETE FROM anomaly_threshold;
