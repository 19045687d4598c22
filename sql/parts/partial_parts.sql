-- The folded parts whose rows of some days are hidden (their days loaded again into day parts).
SELECT DISTINCT file FROM warehouse_hidden_days;
