-- Version 5: a result's app version display name, changelog, golden run method and metric
-- thresholds (JSON). Rows loaded before hold NULL there until their run is fetched again or
-- `ces-pipeline rebuild` replays the raw lake; the result detail tables (turn replays, scores,
-- expectation outcomes and results, latencies, scenario results) are new and created empty.
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS app_version_display_name VARCHAR;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS changelog VARCHAR;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS golden_run_method VARCHAR;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS evaluation_metrics_thresholds JSON;
