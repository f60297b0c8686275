-- Evidence lines of one log whose time is more than a second before that of the evidence line
-- above them in the file: the log goes back in time (rotated logs joined in the wrong order).
-- Shorter steps back are what one log written by several processes (one per rank or worker)
-- shows. Params: $node, $source.
WITH timed AS (
    SELECT
        source_row,
        ts,
        lag(source_row) OVER (ORDER BY source_row) AS prev_row,
        lag(ts) OVER (ORDER BY source_row) AS prev_ts
    FROM _engine_parsed
    WHERE kind IS NOT NULL AND ts IS NOT NULL
)
SELECT
    CAST($node AS VARCHAR) AS node, CAST($source AS VARCHAR) AS source, source_row, ts,
    prev_row, prev_ts
FROM timed
WHERE ts < prev_ts - INTERVAL 1 SECOND
