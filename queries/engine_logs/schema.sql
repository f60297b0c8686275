-- Engine evidence added for vLLM and TensorRT-LLM (forensics.ingest.engine_logs), beside the
-- tables of sglang/schema.sql: engine_startup gains the block count and block size of a
-- `# GPU blocks: N` line; engine_kv_faults holds one row per (node, request, kind) of a KV
-- transfer fault (kind expired: the prefill released the KV blocks of a request whose
-- lease expired; invalid: a decode worker read KV blocks of a request the prefill no longer
-- knew), rid as the engine printed it and ext_rid the id the client gave (vLLM's internal
-- `<external id>-<8 hex>` less its suffix); engine_pool_usage the periodic `KV cache usage:
-- P%` lines.
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS blocks BIGINT;
ALTER TABLE engine_startup ADD COLUMN IF NOT EXISTS block_size BIGINT;
CREATE TABLE IF NOT EXISTS engine_kv_faults (
    node VARCHAR, role VARCHAR, ts TIMESTAMPTZ, rid VARCHAR, ext_rid VARCHAR, kind VARCHAR,
    lines BIGINT, source VARCHAR, source_row BIGINT
);
CREATE TABLE IF NOT EXISTS engine_pool_usage (
    node VARCHAR, role VARCHAR, ts TIMESTAMPTZ, usage_pct DOUBLE, source VARCHAR,
    source_row BIGINT
)
