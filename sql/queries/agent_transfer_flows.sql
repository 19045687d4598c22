-- Agent transfers from one agent to another (from → to), most frequent first.
-- from is the conversation's entry agent for its first transfer, else the previous transfer's target.
-- param app VARCHAR = NULL: only this app (full resource name or app id); every app when unset
-- param since DATE = 1970-01-01: first UTC day included
-- param until DATE = 9999-12-31: first UTC day excluded
SELECT
    from_agent,
    coalesce(max(from_display_name), regexp_extract(from_agent, '[^/]+$'), '(unknown entry agent)') AS from_label,
    to_agent,
    coalesce(max(to_display_name), regexp_extract(to_agent, '[^/]+$')) AS to_label,
    count(*) AS transfers,
    count(DISTINCT conversation_name) AS conversations
FROM agent_transfer_steps
WHERE ($app IS NULL OR $app IN (app, split_part(app, '/', 6)))
    AND day >= $since AND day < $until
GROUP BY from_agent, to_agent
ORDER BY transfers DESC, from_label, to_label;
