-- The conversations a load replaces, filled by stage_partition_conversations.sql.
CREATE OR REPLACE TEMP TABLE partition_conversations (conversation_name VARCHAR);
