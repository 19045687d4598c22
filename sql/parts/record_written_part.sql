-- One part the load wrote ($file NULL: the partition has no rows of that table any more).
INSERT INTO written_parts VALUES ($relation, $app, $day, $file, $rows);
