-- The case file's [[capacity]] timeline as a table; `ordinal` is the file order (first match wins).
CREATE OR REPLACE TABLE case_capacity (
    ordinal INTEGER,
    role VARCHAR,
    nodes VARCHAR,
    tokens BIGINT,
    start_ts TIMESTAMPTZ,
    end_ts TIMESTAMPTZ
)
