-- Which sequences of tool calls and agent transfers do conversations follow each day, and how long do they take?
-- Grain: one row per (day, app, trajectory); day is the UTC day of the conversation's start_time
-- (the day of its partition). Built on conversation_trajectories: trajectory is a conversation's
-- steps joined by " > " ('' for a conversation without tool calls or transfers). The day's 20 most
-- followed trajectories of an app keep a row each, ranked 1 to 20 (by conversations, ties by
-- trajectory); the rest share the row '(other)' (steps NULL, rank 21), so that a day costs at
-- most 21 rows however varied its conversations. conversations counts
-- those that followed it; the seconds are percentiles of their duration (open conversations,
-- without an end, are left out of them), avg_turns their mean turn count.
-- A table kept by every load: the rows of the (app, day) partitions it replaced are computed
-- again from those partitions alone ($first..$last, rollup_partitions), in its transaction.
WITH followed AS (
    SELECT day, app, trajectory, steps, turn_count, duration_seconds
    FROM conversation_trajectories
    SEMI JOIN rollup_partitions USING (app, day)
    WHERE day BETWEEN $first AND $last
),
ranked AS (
    SELECT
        day,
        app,
        trajectory,
        row_number() OVER (PARTITION BY day, app ORDER BY count(*) DESC, trajectory) AS rank
    FROM followed
    GROUP BY day, app, trajectory
)
SELECT
    f.day,
    f.app,
    CASE WHEN r.rank <= 20 THEN f.trajectory ELSE '(other)' END AS trajectory,
    CASE WHEN r.rank <= 20 THEN any_value(f.steps) END AS steps,
    CASE WHEN r.rank <= 20 THEN min(r.rank) ELSE 21 END AS rank,
    count(*) AS conversations,
    avg(f.turn_count) AS avg_turns,
    quantile_cont(f.duration_seconds, 0.5) AS p50_seconds,
    quantile_cont(f.duration_seconds, 0.9) AS p90_seconds
FROM followed AS f
JOIN ranked AS r USING (day, app, trajectory)
GROUP BY f.day, f.app, CASE WHEN r.rank <= 20 THEN f.trajectory ELSE '(other)' END, r.rank <= 20
