-- The rows of the month's other days as its current part ($current) holds them: the rest of the
-- new part of write_rollup_part.sql.
UNION ALL BY NAME
SELECT * FROM read_parquet($current, hive_partitioning = false) AS kept
ANTI JOIN rollup_partitions AS computed ON computed.app = kept.app AND computed.day = kept.day
