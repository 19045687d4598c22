-- One row per timed tool call or span of a result (per turn of a golden result). Key: (evaluation_result_name, latency_index).
CREATE TABLE IF NOT EXISTS evaluation_result_latencies (
    evaluation_result_name VARCHAR,
    evaluation_run_name VARCHAR,
    latency_index INTEGER,
    turn_index INTEGER,
    kind VARCHAR,
    span_type VARCHAR,
    subject VARCHAR,
    display_name VARCHAR,
    start_time TIMESTAMPTZ,
    end_time TIMESTAMPTZ,
    latency_seconds DOUBLE
);
