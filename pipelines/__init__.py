"""ces-pipeline: CES conversations and evaluation runs into a Parquet lake and a DuckDB warehouse."""

__version__ = "0.1.0"
