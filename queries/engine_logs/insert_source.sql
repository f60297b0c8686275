-- One row of engine_sources for an ingested log: its node, the times of its first and last
-- line that carries a time (any line the engine wrote with its time head, evidence or not:
-- a `Prefill batch` or an access-log line proves the server running as well as a request
-- line does, so a late line of one server still shows it overlapping another's), and how
-- many startup lines it loaded into engine_startup (a log with none starts no server: a
-- metrics export, a request log captured apart, a rotated log's later part).
-- Params: $node, $source.
SELECT
    CAST($node AS VARCHAR) AS node,
    CAST($source AS VARCHAR) AS source,
    least(
        min(ts) FILTER (WHERE kind IS NOT NULL AND reason IS NULL),
        min(first_line_ts)
    ) AS first_ts,
    greatest(
        max(ts) FILTER (WHERE kind IS NOT NULL AND reason IS NULL),
        max(last_line_ts)
    ) AS last_ts,
    (
        SELECT count(*) FROM engine_startup
        WHERE source = CAST($source AS VARCHAR) AND reason IS NULL AND ts IS NOT NULL
    ) AS startup_lines
FROM _engine_parsed
