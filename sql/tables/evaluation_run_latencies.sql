-- One row per tool, callback, guardrail and LLM-call latency entry of a run's latency report. Key: (evaluation_run_name, kind, subject).
CREATE TABLE IF NOT EXISTS evaluation_run_latencies (
    evaluation_run_name VARCHAR,
    kind VARCHAR,
    subject VARCHAR,
    display_name VARCHAR,
    p50_seconds DOUBLE,
    p90_seconds DOUBLE,
    p99_seconds DOUBLE,
    call_count INTEGER
);
