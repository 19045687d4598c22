-- The first day of a trend's default window: `since` when given; else the 30 days up to the
-- newest day loaded before `until` (NULL: no end), so a question asked without dates costs a
-- month of rollups however long the history; 1970-01-01 on a warehouse without conversations.
-- Every named query's `since` and the dashboard's window go through it: one rule for both.
-- The catalog's macro reads daily_conversations; a question about a few apps, whose rollups are
-- temporary views of those apps' parts, shadows it with a temporary one reading the file's view of
-- every app's (pipelines/warehouse/part_views.py): its window is the one every app's question has.
CREATE OR REPLACE {temporary} MACRO window_start(since, until) AS coalesce(
    since,
    (SELECT max(day) FROM {relation} WHERE day < coalesce(until, DATE '9999-12-31')) - 29,
    DATE '1970-01-01'
);
