-- One row per evaluation expectation (a natural-language criterion) a result was judged against. Key: (evaluation_result_name, expectation_index).
CREATE TABLE IF NOT EXISTS evaluation_expectation_results (
    evaluation_result_name VARCHAR,
    evaluation_run_name VARCHAR,
    expectation_index INTEGER,
    evaluation_expectation VARCHAR,
    prompt VARCHAR,
    outcome VARCHAR,
    explanation VARCHAR
);
