-- One row per tool, callback, guardrail and LLM-call latency entry of a run's latency report.
-- Key: (evaluation_run_name, kind, entry_index): entry_index is the entry's position in its
-- list, since two callbacks of one stage, or two tools of a toolset named without toolId,
-- share a subject.
CREATE TABLE IF NOT EXISTS evaluation_run_latencies (
    evaluation_run_name VARCHAR,
    kind VARCHAR,
    subject VARCHAR,
    display_name VARCHAR,
    p50_seconds DOUBLE,
    p90_seconds DOUBLE,
    p99_seconds DOUBLE,
    call_count INTEGER,
    entry_index INTEGER
);
