-- Descriptions of evaluation_run_personas and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_run_personas IS 'One row per personaRunConfigs entry of an evaluation run. Key: (evaluation_run_name, persona_index).';
COMMENT ON COLUMN evaluation_run_personas.evaluation_run_name IS 'Full resource name of the evaluation run (projects/{p}/locations/{l}/apps/{a}/evaluationRuns/{r}).';
COMMENT ON COLUMN evaluation_run_personas.persona_index IS '0-based position in personaRunConfigs.';
COMMENT ON COLUMN evaluation_run_personas.persona IS 'Resource name of the evaluation persona.';
COMMENT ON COLUMN evaluation_run_personas.task_count IS 'Tasks run with this persona.';
