-- One permit of a shared budget, on the database's clock so that hosts' clocks never matter:
-- the row lock orders concurrent callers; each gets the seconds it waits for its permit.
-- An arrival more than a minute ahead was left by a changed rate or clock: start afresh.
INSERT INTO ces_rate_limit AS budget (name, next_arrival)
VALUES (%(name)s, clock_timestamp() + make_interval(secs => %(interval)s))
ON CONFLICT (name) DO UPDATE SET next_arrival = (
    CASE
        WHEN budget.next_arrival > clock_timestamp() + interval '60 seconds' THEN clock_timestamp()
        ELSE greatest(budget.next_arrival, clock_timestamp())
    END
) + make_interval(secs => %(interval)s)
RETURNING extract(epoch FROM budget.next_arrival - clock_timestamp())::float8 - %(interval)s
