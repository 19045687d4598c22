"""The lake: raw API records (gzip JSON Lines) and flattened tables (zstd Parquet).

Both are partitioned by app and UTC date and written atomically, so a reader never sees a
half-written file and re-running a partition replaces it.
"""
