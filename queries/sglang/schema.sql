-- Engine evidence tables (CONTRACTS.md), created once; filled by forensics.sglang.
-- engine_startup holds every capacity line; engine_capacity (one span per server start) is
-- rebuilt from it after each ingest, since a span ends at the node's next start.
CREATE TABLE IF NOT EXISTS engine_startup (
    node VARCHAR, role VARCHAR, kind VARCHAR, tags VARCHAR, ts TIMESTAMPTZ, tokens BIGINT,
    context_len BIGINT, source VARCHAR, source_row BIGINT
);
CREATE TABLE IF NOT EXISTS engine_capacity (
    node VARCHAR, role VARCHAR, tokens BIGINT, context_len BIGINT, start_ts TIMESTAMPTZ,
    end_ts TIMESTAMPTZ, source VARCHAR, source_row BIGINT
);
CREATE TABLE IF NOT EXISTS engine_requests (
    node VARCHAR, role VARCHAR, rid VARCHAR, bootstrap_room BIGINT, input_len BIGINT,
    output_len BIGINT, ts TIMESTAMPTZ, source VARCHAR, source_row BIGINT, kind VARCHAR,
    finish_reason VARCHAR
);
CREATE TABLE IF NOT EXISTS engine_aborts (
    node VARCHAR, role VARCHAR, rid VARCHAR, bootstrap_room BIGINT, requested_tokens BIGINT,
    max_tokens BIGINT, ts TIMESTAMPTZ, source VARCHAR, source_row BIGINT, kind VARCHAR
)
