-- One row of engine_sources for an ingested log: its node, the times of its first and last
-- loaded evidence line, and how many startup lines it loaded into engine_startup (a log with
-- none starts no server: a metrics export, a request log captured apart, a rotated log's
-- later part). Params: $node, $source.
SELECT
    CAST($node AS VARCHAR) AS node,
    CAST($source AS VARCHAR) AS source,
    min(ts) AS first_ts,
    max(ts) AS last_ts,
    (
        SELECT count(*) FROM engine_startup
        WHERE source = CAST($source AS VARCHAR) AND reason IS NULL AND ts IS NOT NULL
    ) AS startup_lines
FROM _engine_parsed
WHERE kind IS NOT NULL AND reason IS NULL AND ts IS NOT NULL
