-- When an app's newest stored evaluation run was created: a discovery of its runs lists them
-- newest first and stops a margin before this (older runs change only while unfinished, and
-- those are fetched by name). NULL before any run of the app is stored.
SELECT max(create_time) AS newest_created
FROM evaluation_runs
WHERE app = $app;
