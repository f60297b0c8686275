-- Two logs that give one node id, both with startup lines (each starts a server), whose lines
-- interleave in time (their first..last spans overlap by more than a second): two servers,
-- or two copies of one log, that a merge would make one. Rotated logs of one server follow
-- each other and never show here.
SELECT
    a.node, a.source, a.first_ts, a.last_ts, b.source, b.first_ts, b.last_ts
FROM engine_sources AS a
JOIN engine_sources AS b
  ON a.node = b.node AND a.source < b.source
WHERE a.startup_lines > 0
  AND b.startup_lines > 0
  AND least(a.last_ts, b.last_ts) > greatest(a.first_ts, b.first_ts) + INTERVAL 1 SECOND
ORDER BY a.node, a.source, b.source
