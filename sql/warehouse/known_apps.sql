-- Every app the warehouse holds rows of: its loaded conversations (their daily rollup), its
-- evaluation runs and its rejects.
SELECT app FROM daily_conversations WHERE app IS NOT NULL
UNION
SELECT app FROM evaluation_runs WHERE app IS NOT NULL
UNION
SELECT app FROM rejects WHERE app IS NOT NULL
ORDER BY app;
