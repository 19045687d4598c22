DROP TABLE IF EXISTS rescored_days;
