-- Agent transfers from one agent to another (from → to) in each app, most frequent first.
-- from is the conversation's entry agent for its first transfer, else the previous transfer's target.
-- Labels are the agent's display name as any transfer to it gave it, else its id; an unknown
-- entry agent is "(unknown entry agent)". Read from the daily_agent_transfers rollup (a conversation
-- belongs to one app and day, so its sums count each conversation once).
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = NULL: first UTC day included; unset: the 30 days up to the newest day with conversations
-- param until DATE = 9999-12-31: first UTC day excluded
WITH agent_names AS (
    SELECT to_agent AS agent, max(to_display_name) AS display_name
    FROM daily_agent_transfers
    GROUP BY to_agent
),
flows AS (
    SELECT app, from_agent, to_agent, CAST(sum(transfers) AS BIGINT) AS transfers,
        CAST(sum(conversations) AS BIGINT) AS conversations
    FROM daily_agent_transfers
    WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
        AND day >= window_start($since, $until) AND day < $until
    GROUP BY app, from_agent, to_agent
)
SELECT
    f.app,
    f.from_agent,
    coalesce(source.display_name, regexp_extract(f.from_agent, '[^/]+$'), '(unknown entry agent)') AS from_label,
    f.to_agent,
    coalesce(target.display_name, regexp_extract(f.to_agent, '[^/]+$')) AS to_label,
    f.transfers,
    f.conversations
FROM flows AS f
LEFT JOIN agent_names AS source ON source.agent = f.from_agent
LEFT JOIN agent_names AS target ON target.agent = f.to_agent
ORDER BY f.transfers DESC, from_label, to_label, f.from_agent NULLS FIRST, f.to_agent, f.app;
