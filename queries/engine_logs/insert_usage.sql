-- The periodic stats lines of one log (KV cache usage: P%) for engine_pool_usage.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, ts, usage_pct,
    CAST($source AS VARCHAR) AS source, source_row
FROM _engine_parsed
WHERE reason IS NULL AND kind = 'usage'
