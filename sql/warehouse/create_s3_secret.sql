-- How DuckDB's httpfs reaches the S3 (or S3-compatible) store a DuckLake's data files lie in,
-- from the standard AWS variables. DuckDB binds no parameters here: each slot is a string
-- literal made by `pipelines.warehouse.ducklake.quoted`.
CREATE OR REPLACE SECRET ces_warehouse_s3 (
    TYPE s3,
    KEY_ID {key_id},
    SECRET {secret},
    SESSION_TOKEN {session_token},
    REGION {region},
    ENDPOINT {endpoint},
    URL_STYLE {url_style},
    USE_SSL {use_ssl}
);
