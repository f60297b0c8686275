-- Capacity lines of one log (KV Cache is allocated / max_total_num_tokens) for engine_startup.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, kind, tags, ts, tokens,
    context_len, CAST($source AS VARCHAR) AS source, source_row
FROM _sglang_parsed
WHERE reason IS NULL AND kind IN ('kv_alloc', 'pool')
