-- Every part a file lists, now or before: any other part on disk was written by a load that
-- never published (it was killed).
SELECT file FROM warehouse_parts WHERE file IS NOT NULL
UNION ALL
SELECT file FROM warehouse_retired_parts;
