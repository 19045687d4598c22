-- Each conversation of the load once, under the partition it belongs to.
CREATE OR REPLACE TEMP TABLE load_targets AS
SELECT conversation_name, arg_max(app, position) AS app, arg_max(partition_date, position) AS partition_date
FROM load_conversations
WHERE conversation_name IS NOT NULL
GROUP BY conversation_name;
