-- Version 2: evaluation runs record when they were fetched, so an older observation never
-- overwrites a newer one. Existing rows get NULL (loaded before observations were stamped).
ALTER TABLE IF EXISTS evaluation_runs ADD COLUMN IF NOT EXISTS observed_at TIMESTAMPTZ;
