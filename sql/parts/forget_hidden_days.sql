-- A folded part no partition lists any more has no day to hide.
DELETE FROM warehouse_hidden_days AS hidden
WHERE NOT EXISTS (SELECT 1 FROM warehouse_parts AS listed WHERE listed.file = hidden.file);
