-- Startup lines of one log for engine_startup: server_args (role: its own disaggregation_mode;
-- setup: what keeps the plain-pool admission formula from applying, '' for none; page_size),
-- KV pool allocations (pool: main, full, swa, labelled, va_upper_bound, post_capture,
-- post_capture_draft), sliding-window pool lines (tokens: the full pool), the
-- max_total_num_tokens line and the engine's own pre-flight warning. A quarantined startup
-- line is kept too, with its `reason` and none of its figures: it gives no capacity and opens
-- no start, but a start can name it.
SELECT
    CAST($node AS VARCHAR) AS node,
    CASE WHEN reason IS NULL THEN coalesce(leg, CAST($role AS VARCHAR))
         ELSE CAST($role AS VARCHAR) END AS role,
    kind, tags, ts,
    CASE WHEN reason IS NULL THEN tokens END AS tokens,
    CASE WHEN reason IS NULL THEN context_len END AS context_len,
    CAST($source AS VARCHAR) AS source, source_row, pool,
    CASE WHEN reason IS NULL THEN setup END AS setup,
    CASE WHEN reason IS NULL THEN page_size END AS page_size,
    reason
FROM _engine_parsed
WHERE kind IN ('server_args', 'kv_alloc', 'swa_pool', 'pool', 'engine_preflight')
