-- The current parts of a conversation table of a DuckDB-file warehouse, one Parquet file per
-- (app, day), the day read from each file's path (partition_date=YYYY-MM-DD), so that a query
-- filtering on partition_date opens only the files of those days. The parts are one string of
-- their names under the root (the macro of `parts_list.sql`), split as the view is read: a list
-- of 12,000 paths stored in the catalog made the file 36 MB larger and every open (0.06 s) and
-- bind (0.1 s) slower. The lambda
-- is written with the arrow, which every DuckDB 1.x reads (`lambda part:` came with 1.3); a view
-- keeps working where a newer DuckDB disables the arrow for new statements.
CREATE OR REPLACE {temporary} VIEW {relation} AS
SELECT {columns}
FROM read_parquet(
    list_transform(string_split({relation}_files(), ','), part -> {root} || part),
    hive_partitioning = true, hive_types = {{'partition_date': DATE}}
);
