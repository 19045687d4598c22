-- How many conversations move from one agent to another each day (from → to)?
-- Grain: one row per (day, app, from_agent, to_agent); day is the UTC day of the conversation's
-- start_time (the day of its partition). Built on agent_transfer_steps: from_agent is the entry agent for a conversation's
-- first transfer (NULL when unknown), else the previous transfer's target. transfers counts
-- transfers, conversations the distinct conversations that made at least one of them.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    day,
    app,
    from_agent,
    to_agent,
    max(from_display_name) AS from_display_name,
    max(to_display_name) AS to_display_name,
    count(*) AS transfers,
    count(DISTINCT conversation_name) AS conversations
FROM agent_transfer_steps
SEMI JOIN rollup_partitions USING (app, day)
WHERE day BETWEEN $first AND $last
GROUP BY day, app, from_agent, to_agent
