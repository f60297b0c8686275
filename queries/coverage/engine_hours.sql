-- Per engine node: its evidence lines (per-request stats and aborts) per UTC hour of the
-- window, and the first and last evidence line it logged at any time (`hour` NULL).
WITH lines AS (
    SELECT node, role, ts FROM engine_requests WHERE ts IS NOT NULL
    UNION ALL
    SELECT node, role, ts FROM engine_aborts WHERE ts IS NOT NULL
)
SELECT node, role, date_trunc('hour', ts) AS hour, count(*) AS lines, min(ts) AS first_ts,
    max(ts) AS last_ts
FROM lines
WHERE ts >= $window_start AND ts < $window_end
GROUP BY node, role, date_trunc('hour', ts)
UNION ALL
SELECT node, role, CAST(NULL AS TIMESTAMPTZ) AS hour, count(*) AS lines, min(ts) AS first_ts,
    max(ts) AS last_ts
FROM lines
GROUP BY node, role
ORDER BY node, role, hour NULLS FIRST
