-- The load's parts take the place of those they replace (a part of no rows is listed by none).
DELETE FROM warehouse_parts AS listed USING written_parts AS written
WHERE listed.relation = written.relation
    AND listed.app IS NOT DISTINCT FROM written.app
    AND listed.partition_date IS NOT DISTINCT FROM written.partition_date;
INSERT INTO warehouse_parts SELECT * FROM written_parts WHERE file IS NOT NULL;
DELETE FROM written_parts;
