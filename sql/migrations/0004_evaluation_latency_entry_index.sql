-- Version 4: a latency entry is keyed by its position in its list (entry_index), since two
-- callbacks of one stage, or two tools of a toolset named without toolId, share a subject.
-- Existing rows are numbered within their run and kind in subject order; the next fetch of a
-- run replaces its rows with the report's own order.
ALTER TABLE IF EXISTS evaluation_run_latencies ADD COLUMN IF NOT EXISTS entry_index INTEGER;
UPDATE evaluation_run_latencies AS l
SET entry_index = n.position
FROM (
    SELECT
        rowid AS row_id,
        row_number() OVER (PARTITION BY evaluation_run_name, kind ORDER BY subject) - 1 AS position
    FROM evaluation_run_latencies
) AS n
WHERE l.rowid = n.row_id AND l.entry_index IS NULL;
