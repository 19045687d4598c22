-- The first day of a trend's default window: `since` when given; else the 30 days up to the
-- newest day loaded before `until` (NULL: no end), so a question asked without dates costs a
-- month of rollups however long the history; 1970-01-01 on a warehouse without conversations.
-- Every named query's `since` and the dashboard's window go through it: one rule for both.
CREATE OR REPLACE MACRO window_start(since, until) AS coalesce(
    since,
    (SELECT max(day) FROM daily_conversations WHERE day < coalesce(until, DATE '9999-12-31')) - 29,
    DATE '1970-01-01'
);
