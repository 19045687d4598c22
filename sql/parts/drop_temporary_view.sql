DROP VIEW IF EXISTS temp.{relation};
DROP MACRO IF EXISTS temp.{relation}_files;
DROP MACRO IF EXISTS temp.{relation}_folded_files;
