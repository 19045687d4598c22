-- Keys of {table} that occur more than once among one app's evaluation runs; the key is
-- ({key}). Expect none.
-- Returns one row: how many keys repeat, and up to 10 of them.
SELECT count(*) AS failures, list(duplicate)[1:10] AS sample
FROM (
    SELECT struct_pack({key}) AS duplicate
    FROM {table}
    WHERE evaluation_run_name IN (SELECT evaluation_run_name FROM evaluation_runs WHERE app = $app)
    GROUP BY ALL
    HAVING count(*) > 1
);
