-- Which sequences of tool calls and agent transfers do conversations follow each day, and how long do they take?
-- Grain: one row per (day, app, trajectory); day is the UTC day of the conversation's start_time
-- (the day of its partition). Built on conversation_trajectories: trajectory is a conversation's
-- steps joined by " > " ('' for a conversation without tool calls or transfers). conversations
-- counts those that followed it; the seconds are percentiles of their duration (open
-- conversations, without an end, are left out of them), avg_turns their mean turn count.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
SELECT
    day,
    app,
    trajectory,
    any_value(steps) AS steps,
    count(*) AS conversations,
    avg(turn_count) AS avg_turns,
    quantile_cont(duration_seconds, 0.5) AS p50_seconds,
    quantile_cont(duration_seconds, 0.9) AS p90_seconds
FROM conversation_trajectories
SEMI JOIN rollup_partitions USING (app, day)
WHERE day BETWEEN $first AND $last
GROUP BY day, app, trajectory
