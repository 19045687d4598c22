-- Latency percentiles below zero in one app's evaluation runs. Expect none.
-- Returns one row: how many, and up to 10 of them.
SELECT count(*) AS failures, list(offender)[1:10] AS sample
FROM (
    SELECT struct_pack(evaluation_run_name, kind, subject, p50_seconds, p90_seconds, p99_seconds) AS offender
    FROM evaluation_run_latencies
    WHERE least(p50_seconds, p90_seconds, p99_seconds) < 0
      AND evaluation_run_name IN (SELECT evaluation_run_name FROM evaluation_runs WHERE app = $app)
);
