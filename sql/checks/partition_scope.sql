-- The conversations of one (app, UTC day) partition: the scope of the partition checks.
CREATE OR REPLACE TEMP TABLE check_scope AS
SELECT conversation_name FROM conversations
WHERE app = $app AND start_time >= $since AND start_time < $until;
