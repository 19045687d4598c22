-- The shared CES request budgets: per budget, the GCRA's theoretical arrival time of the next
-- permit (pipelines/ces/ratelimit.py, PostgresRateLimiter).
CREATE TABLE IF NOT EXISTS ces_rate_limit (
    name text PRIMARY KEY,
    next_arrival timestamptz NOT NULL
)
