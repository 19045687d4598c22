-- After the rollups: llm_calls is the view again.
DROP TABLE IF EXISTS temp.main.llm_calls;
