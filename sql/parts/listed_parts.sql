-- The paths of the parts a view reads: the names that the macro {macro} (of `parts_list.sql`)
-- holds as one string, split as the view is read, each made whole again (the relation's folder
-- before it, the day's key `partition_date=` in place of its `=`, the suffix after it). A list of
-- 12,000 paths stored in the catalog made the file 36 MB larger and every open (0.06 s) and bind
-- (0.1 s) slower. The lambda is written with the arrow, which every DuckDB 1.x reads (`lambda
-- part:` came with 1.3); a view keeps working where a newer DuckDB disables the arrow for new
-- statements.
list_transform(string_split({macro}(), ','), part -> {folder} || replace(part, '/=', {day_key}) || {suffix})
