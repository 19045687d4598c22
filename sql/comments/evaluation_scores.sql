-- Descriptions of evaluation_scores and its columns, shown by BI tools (applied by Warehouse.ensure_schema).
COMMENT ON TABLE evaluation_scores IS 'One row per score a result was judged by, named by metric: compare any metric across runs and app versions with one query. Key: (evaluation_result_name, score_index).';
COMMENT ON COLUMN evaluation_scores.evaluation_result_name IS 'The result the score belongs to.';
COMMENT ON COLUMN evaluation_scores.evaluation_run_name IS 'The evaluation run that produced the result.';
COMMENT ON COLUMN evaluation_scores.score_index IS 'Position of the score among the result''s scores (0-based, in the order the API lists them).';
COMMENT ON COLUMN evaluation_scores.metric IS 'semantic_similarity (0-4), hallucination (1: hallucinated), tool_invocation, tool_ordered_invocation and overall_tool_invocation (0-1) per golden turn; task_completion, user_goal_satisfaction (1: yes), hallucination and rubric per scenario.';
COMMENT ON COLUMN evaluation_scores.turn_index IS 'The golden turn scored (0-based); NULL for a scenario''s scores.';
COMMENT ON COLUMN evaluation_scores.rubric IS 'The rubric of a rubric score; NULL otherwise.';
COMMENT ON COLUMN evaluation_scores.score IS 'The score as the API reports it.';
COMMENT ON COLUMN evaluation_scores.label IS 'The judge''s label for the score, if any.';
COMMENT ON COLUMN evaluation_scores.outcome IS 'PASS, FAIL or SKIPPED where the metric has an outcome (the API enum string).';
COMMENT ON COLUMN evaluation_scores.explanation IS 'The judge''s explanation, if any.';
