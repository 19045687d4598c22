"""The three steps of a partition, as plain functions the Dagster assets and the CLI call.

fetch: CES API → raw records in the lake; flatten: raw records → Parquet tables;
load: Parquet tables → DuckDB. Flatten and load never touch the API, which is what makes
an offline rebuild possible.
"""
