-- The replaced parts no reader's file lists any more: each was dropped by a publication no newer
-- than the oldest one a reader still holds ($oldest_held).
SELECT file FROM warehouse_retired_parts WHERE retired_version <= $oldest_held;
