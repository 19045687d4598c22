-- The days with conversations of a DuckDB-file warehouse, as its list of parts holds them (a
-- row an app and day with rows, in the file): what ends a trend's default window
-- (`sql/macros/window_start.sql`) without opening every app's `daily_conversations` parts (400
-- files at 2M conversations, a second time in each query over every app).
(SELECT partition_date AS day FROM main.warehouse_parts WHERE relation = 'conversations') AS conversation_days
