-- The rows of a DuckLake load's partition files ($paths), each with its partition (load_partitions),
-- but those of a conversation that belongs to another partition of the load (load_targets: one
-- whose start moved may sit in two raw days; it is kept once, under the later partition).
SELECT incoming.* EXCLUDE (filename), owner.app AS load_app, owner.partition_date
FROM read_parquet($paths, hive_partitioning = false, filename = true) AS incoming
JOIN load_partitions AS owner
    ON owner.folders = regexp_extract(incoming.filename, '([^/]+/[^/]+)/[^/]+$', 1)
LEFT JOIN load_targets AS target ON target.conversation_name = incoming.conversation_name
WHERE target.conversation_name IS NULL
    OR (target.app = owner.app AND target.partition_date = owner.partition_date)
