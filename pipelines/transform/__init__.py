"""Pure transforms: CES JSON in, Arrow record batches out. No HTTP, no files, no Dagster."""
