-- How many conversations move from one agent to another each day (from → to)?
-- Grain: one row per (day, app, from_agent, to_agent); day is the UTC date of the conversation's
-- start_time. Built on agent_transfer_steps: from_agent is the entry agent for a conversation's
-- first transfer (NULL when unknown), else the previous transfer's target. transfers counts
-- transfers, conversations the distinct conversations that made at least one of them.
CREATE OR REPLACE VIEW daily_agent_transfers AS
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
WHERE day IS NOT NULL
GROUP BY day, app, from_agent, to_agent;
