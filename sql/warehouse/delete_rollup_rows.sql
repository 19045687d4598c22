-- Remove {table}'s rows of the partitions in rollup_partitions ($first..$last), to compute them again.
DELETE FROM {table}
WHERE day BETWEEN $first AND $last
    AND EXISTS (SELECT 1 FROM rollup_partitions AS p WHERE p.app = {table}.app AND p.day = {table}.day);
