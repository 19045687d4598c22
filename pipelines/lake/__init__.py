"""The lake: raw API records (gzip JSON Lines) and flattened tables (zstd Parquet), by app and
UTC date, written atomically."""
