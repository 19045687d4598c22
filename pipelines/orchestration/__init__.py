"""The Dagster layer: resources, partitions and thin assets over `pipelines.ingest`."""
