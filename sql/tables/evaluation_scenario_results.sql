-- One row per scenario evaluation result: the task, the user's facts and the verdicts on the whole conversation. Key: (evaluation_result_name).
CREATE TABLE IF NOT EXISTS evaluation_scenario_results (
    evaluation_result_name VARCHAR,
    evaluation_run_name VARCHAR,
    conversation_name VARCHAR,
    task VARCHAR,
    user_facts JSON,
    all_expectations_satisfied BOOLEAN,
    task_completed BOOLEAN
);
