"""The lake: raw records (gzip JSON Lines), tables (zstd Parquet), by app and UTC date, written atomically."""
