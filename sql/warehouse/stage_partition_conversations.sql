-- The conversations a load replaces: those already loaded under its partitions (load_partitions,
-- within the days $first..$last and apps $first_app..$last_app, by which a DuckLake's scan skips
-- other data files), plus those arriving now (load_conversations). One statement a load.
INSERT INTO partition_conversations
SELECT conversation_name FROM conversations AS c
WHERE partition_date BETWEEN $first AND $last
    AND app BETWEEN $first_app AND $last_app
    AND EXISTS (
        SELECT 1 FROM load_partitions AS p WHERE p.app = c.app AND p.partition_date = c.partition_date
    )
UNION
SELECT conversation_name FROM load_conversations WHERE conversation_name IS NOT NULL;
