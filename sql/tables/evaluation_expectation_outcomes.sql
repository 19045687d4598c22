-- One row per expectation a result checked: a golden turn's expected tool call, response or transfer, or a scenario's expected tool call, with what was observed. Key: (evaluation_result_name, outcome_index).
CREATE TABLE IF NOT EXISTS evaluation_expectation_outcomes (
    evaluation_result_name VARCHAR,
    evaluation_run_name VARCHAR,
    outcome_index INTEGER,
    turn_index INTEGER,
    expectation_kind VARCHAR,
    expected_tool VARCHAR,
    expectation JSON,
    outcome VARCHAR,
    observed_kind VARCHAR,
    observed JSON,
    semantic_similarity_score DOUBLE,
    semantic_similarity_outcome VARCHAR,
    parameter_correctness_score DOUBLE,
    tool_invocation_outcome VARCHAR,
    tool_invocation_explanation VARCHAR
);
