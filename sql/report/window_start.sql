-- The dashboard's first day unless --since says otherwise: the named queries' default window
-- (window_start) ending before $until; no row on a warehouse without conversations before it.
SELECT window_start(NULL, $until) WHERE EXISTS (SELECT 1 FROM daily_conversations WHERE day < $until);
