-- A new part of a rollup for one (app, month) ($app, days from $first up to $last): its rows
-- computed again (fresh_rollup) and, when the month has a part, the rows of its other days
-- (kept_rollup_rows.sql).
COPY (
    SELECT * FROM fresh_rollup WHERE app = $app AND day >= $first AND day < $last
    {sources}
) TO {target} (FORMAT parquet, COMPRESSION zstd);
