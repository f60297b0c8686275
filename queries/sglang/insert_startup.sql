-- Startup lines of one log for engine_startup: server_args (role: its own disaggregation_mode;
-- setup: what keeps the plain-pool admission formula from applying, '' for none), KV pool
-- allocations (pool: main, full, swa, labelled, va_upper_bound, post_capture,
-- post_capture_draft), sliding-window pool lines (tokens: the full pool), the
-- max_total_num_tokens line and the engine's own pre-flight warning.
SELECT
    CAST($node AS VARCHAR) AS node, coalesce(leg, CAST($role AS VARCHAR)) AS role, kind, tags, ts,
    tokens, context_len, CAST($source AS VARCHAR) AS source, source_row, pool, setup
FROM _sglang_parsed
WHERE reason IS NULL AND kind IN ('server_args', 'kv_alloc', 'swa_pool', 'pool', 'engine_preflight')
