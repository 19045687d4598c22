-- The newest conversation start of one app on its newest day ($day, from `loaded_days`): that day's
-- parts alone are read.
SELECT max(start_time) AS newest_start FROM conversations WHERE app = $app AND partition_date = $day;
