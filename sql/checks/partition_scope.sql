-- The conversations a run loaded: those of its apps ($apps) loaded under its days ($first to
-- $last, both included). The scope of the conversation checks that follow.
CREATE OR REPLACE TEMP TABLE check_scope AS
SELECT conversation_name FROM conversations
WHERE app IN (SELECT unnest($apps)) AND partition_date BETWEEN $first AND $last;
