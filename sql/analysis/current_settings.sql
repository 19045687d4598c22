-- The prices and the anomaly threshold the warehouse holds, to compare with the settings'.
SELECT
    (SELECT list((model, input_usd_per_million, output_usd_per_million, cached_input_usd_per_million,
        effective_date, source) ORDER BY model) FROM model_prices) AS prices,
    (SELECT max(z) FROM anomaly_threshold) AS z;
