-- Remove the rejects previously recorded for one partition and source.
DELETE FROM rejects WHERE app = $app AND partition_date = $day AND source = $source;
