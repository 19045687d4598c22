-- The current parts of a conversation table of a DuckDB-file warehouse: the day parts (one
-- Parquet file per (app, day), the day read from each file's path, partition_date=YYYY-MM-DD, so
-- that a query filtering on partition_date opens only the files of those days) and the folded
-- parts (one file of many days of one app, the day in the file, `folded_parts.sql`).
CREATE OR REPLACE {temporary} VIEW {relation} AS
{sources};
