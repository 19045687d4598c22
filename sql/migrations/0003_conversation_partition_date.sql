-- Version 3: every conversation table records the day (UTC) of the partition its rows came
-- from, so that replacing a day reads that day's row groups only. Existing rows get the UTC
-- date of their conversation's start_time, which is the partition they were loaded from.
-- Rows left without one (no conversation row to take it from) are still found by name.
ALTER TABLE IF EXISTS conversations ADD COLUMN IF NOT EXISTS partition_date DATE;
ALTER TABLE IF EXISTS turns ADD COLUMN IF NOT EXISTS partition_date DATE;
ALTER TABLE IF EXISTS messages ADD COLUMN IF NOT EXISTS partition_date DATE;
ALTER TABLE IF EXISTS chunks ADD COLUMN IF NOT EXISTS partition_date DATE;
ALTER TABLE IF EXISTS tool_calls ADD COLUMN IF NOT EXISTS partition_date DATE;
ALTER TABLE IF EXISTS tool_responses ADD COLUMN IF NOT EXISTS partition_date DATE;
ALTER TABLE IF EXISTS agent_transfers ADD COLUMN IF NOT EXISTS partition_date DATE;
ALTER TABLE IF EXISTS spans ADD COLUMN IF NOT EXISTS partition_date DATE;
UPDATE conversations SET partition_date = CAST(timezone('UTC', start_time) AS DATE);
UPDATE turns SET partition_date = c.partition_date
FROM conversations AS c WHERE turns.conversation_name = c.conversation_name;
UPDATE messages SET partition_date = c.partition_date
FROM conversations AS c WHERE messages.conversation_name = c.conversation_name;
UPDATE chunks SET partition_date = c.partition_date
FROM conversations AS c WHERE chunks.conversation_name = c.conversation_name;
UPDATE tool_calls SET partition_date = c.partition_date
FROM conversations AS c WHERE tool_calls.conversation_name = c.conversation_name;
UPDATE tool_responses SET partition_date = c.partition_date
FROM conversations AS c WHERE tool_responses.conversation_name = c.conversation_name;
UPDATE agent_transfers SET partition_date = c.partition_date
FROM conversations AS c WHERE agent_transfers.conversation_name = c.conversation_name;
UPDATE spans SET partition_date = c.partition_date
FROM conversations AS c WHERE spans.conversation_name = c.conversation_name;
