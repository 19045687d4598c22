-- A DuckLake's {relation} of the conversations of bounded_conversations.sql alone, shadowing the
-- table for the same block: it has no app column, so its days' files are skipped by their range
-- and the other apps' rows by the names the join finds (DuckDB filters the scan by them), where
-- every app's rows of those days were read.
CREATE OR REPLACE TEMP VIEW {relation} AS
SELECT * FROM {database}.main.{relation}
SEMI JOIN temp.main.conversations USING (conversation_name)
WHERE partition_date BETWEEN CAST({first} AS DATE) AND CAST({last} AS DATE);
