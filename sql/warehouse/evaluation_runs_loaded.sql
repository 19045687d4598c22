-- Whether any evaluation run is loaded (a count names no column: on a DuckLake, no per-column
-- statistics lookup).
SELECT count(*) > 0 FROM evaluation_runs;
