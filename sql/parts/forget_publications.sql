-- Publications older than $version that no reader holds any more need no record.
DELETE FROM warehouse_publications WHERE version < $version;
