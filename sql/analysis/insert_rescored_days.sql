-- The days of one app ($app; NULL: every app) whose metric scores are computed again.
INSERT INTO rescored_days VALUES ($app, $first, $last);
