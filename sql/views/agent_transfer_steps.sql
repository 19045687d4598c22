-- Who hands a conversation to whom? Each agent transfer with the agent it came from.
-- Grain: one row per agentTransfer chunk (conversation_name, turn_index, message_index,
-- chunk_index), with the app and day (UTC day of the conversation's start_time: the day of
-- its partition, which every row of the conversation carries).
-- Transfers are ordered within their conversation by turn, message and chunk position (the
-- deprecated top-level messages, turn_index NULL, last); step is 1 for the first. from_agent
-- is the conversation's entry_agent for the first transfer (NULL when the API names none) and
-- the previous transfer's target after that.
CREATE OR REPLACE VIEW agent_transfer_steps AS
SELECT
    t.conversation_name,
    c.app,
    t.partition_date AS day,
    t.turn_index,
    t.message_index,
    t.chunk_index,
    row_number() OVER conversation_order AS step,
    CASE
        WHEN row_number() OVER conversation_order = 1 THEN c.entry_agent
        ELSE lag(t.target_agent) OVER conversation_order
    END AS from_agent,
    lag(t.display_name) OVER conversation_order AS from_display_name,
    t.target_agent AS to_agent,
    t.display_name AS to_display_name
FROM agent_transfers AS t
JOIN conversations AS c USING (conversation_name)
-- (partitioned by the day too, which a conversation's rows share: a filter on the day reaches the table)
WINDOW conversation_order AS (
    PARTITION BY t.partition_date, t.conversation_name ORDER BY t.turn_index NULLS LAST, t.message_index, t.chunk_index
);
