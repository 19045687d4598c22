-- The partitions a load brings, each by the last two folders of its files' paths (app=…/date=…,
-- which no filesystem writes differently, as memory://x reads back as memory:///x), and its
-- conversations, each with the partition it belongs to: the last partition of the load that
-- holds it (a conversation whose start moved may still sit in an older raw day).
CREATE OR REPLACE TEMP TABLE load_partitions (folders VARCHAR PRIMARY KEY, app VARCHAR, partition_date DATE);
CREATE OR REPLACE TEMP TABLE load_conversations (
    conversation_name VARCHAR,
    app VARCHAR,
    partition_date DATE,
    position INTEGER
);
