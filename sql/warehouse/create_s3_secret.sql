-- How DuckDB's httpfs reaches an S3-compatible server (`AWS_ENDPOINT_URL`) that a DuckLake's
-- data files lie in: path-style URLs. httpfs reads the credentials and the region from the
-- standard AWS variables itself. DuckDB binds no parameters here: each slot is a string literal
-- made by `pipelines.sqlfiles.quoted`.
CREATE OR REPLACE SECRET ces_warehouse_s3 (TYPE s3, ENDPOINT {endpoint}, URL_STYLE 'path', USE_SSL {use_ssl});
