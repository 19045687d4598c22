-- One row per score a result was judged by: each turn's semantic similarity, hallucination and tool invocation scores, a scenario's task completion, user goal satisfaction, hallucination and rubric scores. Key: (evaluation_result_name, score_index).
CREATE TABLE IF NOT EXISTS evaluation_scores (
    evaluation_result_name VARCHAR,
    evaluation_run_name VARCHAR,
    score_index INTEGER,
    metric VARCHAR,
    turn_index INTEGER,
    rubric VARCHAR,
    score DOUBLE,
    label VARCHAR,
    outcome VARCHAR,
    explanation VARCHAR
);
