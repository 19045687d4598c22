-- The LLM calls of the partitions in rollup_partitions ($first..$last), their span attributes
-- parsed once: this temporary table shadows the view llm_calls for the three rollups that read
-- it. The view is named with its database: `main.llm_calls` alone would find this table again
-- (the temporary catalog has a schema main too, searched first).
CREATE OR REPLACE TEMP TABLE llm_calls AS
SELECT * FROM {database}.main.llm_calls
SEMI JOIN rollup_partitions USING (app, day)
WHERE day BETWEEN $first AND $last;
