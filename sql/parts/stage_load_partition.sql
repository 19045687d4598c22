-- One incoming partition ($incoming: its conversations Parquet file), once however often listed.
INSERT OR IGNORE INTO load_partitions VALUES (regexp_extract($incoming, '([^/]+/[^/]+)/[^/]+$', 1), $app, $day);
