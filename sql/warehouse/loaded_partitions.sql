-- Every (app, day) partition with conversations loaded.
SELECT DISTINCT app, partition_date FROM conversations WHERE partition_date IS NOT NULL;
