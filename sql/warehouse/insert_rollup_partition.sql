-- One (app, day) partition whose rollup rows are computed again.
INSERT INTO rollup_partitions VALUES ($app, $day);
