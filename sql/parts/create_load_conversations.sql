-- The conversations a load brings, each with the partition it belongs to: the last partition of
-- the load that holds it (a conversation whose start moved may still sit in an older raw day).
CREATE OR REPLACE TEMP TABLE load_conversations (
    conversation_name VARCHAR,
    app VARCHAR,
    partition_date DATE,
    position INTEGER
);
