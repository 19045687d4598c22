-- One row per personaRunConfigs entry of an evaluation run. Key: (evaluation_run_name, persona_index).
CREATE TABLE IF NOT EXISTS evaluation_run_personas (
    evaluation_run_name VARCHAR,
    persona_index INTEGER,
    persona VARCHAR,
    task_count INTEGER
);
