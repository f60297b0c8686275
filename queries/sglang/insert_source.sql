-- One row of engine_sources for an ingested log: its node, the times of its first and last
-- loaded evidence line, and how many startup lines it loaded (a log with none starts no
-- server: a metrics export, a request log captured apart). Params: $node, $source.
SELECT
    CAST($node AS VARCHAR) AS node,
    CAST($source AS VARCHAR) AS source,
    min(ts) AS first_ts,
    max(ts) AS last_ts,
    count(*) FILTER (
        WHERE kind IN ('server_args', 'kv_alloc', 'swa_pool', 'pool', 'engine_preflight')
    ) AS startup_lines
FROM _sglang_parsed
WHERE reason IS NULL AND ts IS NOT NULL
