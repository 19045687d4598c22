-- Version 7: what a result says beyond its verdicts. evaluation_results: the changelog's time,
-- the error's session, user-facing message and deprecated Status (code, message, details), and
-- the persona's speech config; evaluation_turn_replays: a turn error's session and user-facing
-- message; evaluation_expectation_outcomes: the expectation's note, skip flag, comparison type
-- and metric overrides, the similarity judge's label and explanation, what an expected and an
-- observed response say, when the observed one was sent, the observed tool, and the expected
-- and observed transfer targets. Rows loaded before hold NULL there until their run is fetched
-- again or `ces-pipeline rebuild` replays the raw lake.
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS changelog_create_time TIMESTAMPTZ;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS error_session_id VARCHAR;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS user_facing_error_message VARCHAR;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS error_status_code INTEGER;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS error_status_message VARCHAR;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS error_status_details JSON;
ALTER TABLE IF EXISTS evaluation_results ADD COLUMN IF NOT EXISTS persona_speech_config JSON;
ALTER TABLE IF EXISTS evaluation_turn_replays ADD COLUMN IF NOT EXISTS error_session_id VARCHAR;
ALTER TABLE IF EXISTS evaluation_turn_replays ADD COLUMN IF NOT EXISTS user_facing_error_message VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS note VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS skip_evaluation BOOLEAN;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS comparison_type VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS parameter_correctness_threshold DOUBLE;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS semantic_similarity_enabled BOOLEAN;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS hallucination_enabled BOOLEAN;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS semantic_similarity_label VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS semantic_similarity_explanation VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS expected_text VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS observed_text VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS observed_time TIMESTAMPTZ;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS observed_tool VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS expected_agent VARCHAR;
ALTER TABLE IF EXISTS evaluation_expectation_outcomes ADD COLUMN IF NOT EXISTS observed_agent VARCHAR;
