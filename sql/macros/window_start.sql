-- The first day of a trend's default window: `since` when given; else the 30 days up to the
-- newest day with conversations before `until` (NULL: no end), so a question asked without dates
-- costs a month of rollups however long the history; 1970-01-01 on a warehouse without
-- conversations. Every named query's `since` and the dashboard's window go through it: one rule
-- for both. The days are read, on a DuckDB file, from its list of parts
-- (`sql/parts/conversation_days.sql`), which no temporary view of a question about a few apps
-- shadows; on a DuckLake, from the daily_conversations rollup, a table.
CREATE OR REPLACE MACRO window_start(since, until) AS coalesce(
    since,
    (SELECT max(day) FROM {relation} WHERE day < coalesce(until, DATE '9999-12-31')) - 29,
    DATE '1970-01-01'
);
