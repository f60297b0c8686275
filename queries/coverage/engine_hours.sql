-- Per engine node: its evidence lines (per-request stats and aborts) per UTC hour of the
-- window (`hour`: whole hours since the epoch), and the first and last evidence line it
-- logged at any time (`hour` NULL).
WITH lines AS (
    SELECT node, role, ts FROM case_engine_requests WHERE ts IS NOT NULL
    UNION ALL
    SELECT node, role, ts FROM case_engine_aborts WHERE ts IS NOT NULL
)
SELECT node, role, hour, count(*) AS lines, min(ts) AS first_ts, max(ts) AS last_ts
FROM (
    SELECT node, role, ts, CAST(floor(epoch(ts)) AS BIGINT) // 3600 AS hour
    FROM lines
    WHERE ts >= $window_start AND ts < $window_end
) AS w
GROUP BY node, role, hour
UNION ALL
SELECT node, role, CAST(NULL AS BIGINT) AS hour, count(*) AS lines, min(ts) AS first_ts,
    max(ts) AS last_ts
FROM lines
GROUP BY node, role
ORDER BY node, role, hour NULLS FIRST
