-- The time each input of a node covers (its first and last evidence line), for the check
-- that two files of one node do not interleave (rotated logs follow one another).
SELECT node, source, min(ts) AS first_ts, max(ts) AS last_ts
FROM (
    SELECT node, source, ts FROM engine_startup
    UNION ALL SELECT node, source, ts FROM engine_requests
    UNION ALL SELECT node, source, ts FROM engine_aborts
    UNION ALL SELECT node, source, ts FROM engine_kv_faults
    UNION ALL SELECT node, source, ts FROM engine_pool_usage
)
WHERE ts IS NOT NULL AND node IN (SELECT unnest(CAST($nodes AS VARCHAR[])))
GROUP BY node, source
ORDER BY node, first_ts, source
