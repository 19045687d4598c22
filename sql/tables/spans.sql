-- One row per span of a turn's trace. Key: (conversation_name, turn_index, span_id).
-- span_id is the span's pre-order position in the turn's tree (root = 0);
-- duration_seconds comes from the span's duration string, not end minus start.
CREATE TABLE IF NOT EXISTS spans (
    conversation_name VARCHAR,
    turn_index INTEGER,
    span_id INTEGER,
    parent_span_id INTEGER,
    depth INTEGER,
    name VARCHAR,
    start_time TIMESTAMPTZ,
    end_time TIMESTAMPTZ,
    duration_seconds DOUBLE,
    attributes JSON,
    partition_date DATE
);
