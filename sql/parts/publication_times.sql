-- When each file was published (version, time): a file stops being current when the next one is.
SELECT version, published_at FROM warehouse_publications ORDER BY version;
