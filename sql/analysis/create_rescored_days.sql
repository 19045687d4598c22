-- The days whose metric scores are computed again: per app, first_day..last_day (app NULL: every app).
CREATE OR REPLACE TEMP TABLE rescored_days (app VARCHAR, first_day DATE, last_day DATE);
