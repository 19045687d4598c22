-- A load's view of its own partitions' parts, once their rollups are computed.
DROP VIEW IF EXISTS temp.{relation};
