-- The replaced parts just deleted from disk.
DELETE FROM warehouse_retired_parts WHERE retired_version <= $oldest_held;
