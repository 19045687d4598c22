-- Number the file about to be published: one more than the file it was copied from.
INSERT INTO warehouse_publications
SELECT coalesce(max(version), 0) + 1, now() FROM warehouse_publications
RETURNING version;
