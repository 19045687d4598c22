-- A load's view of its own partitions' parts, once their rollups are computed.
DROP VIEW IF EXISTS temp.{relation};
DROP MACRO IF EXISTS temp.{relation}_files;
