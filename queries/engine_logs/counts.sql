-- Per-input accounting of one parsed engine log: evidence lines loaded, duplicates (a KV
-- fault line repeating one already loaded for the same node, request and kind: every worker
-- process prints its own), quarantined. Params: $node.
WITH faults AS (
    SELECT kind, rid, count(*) AS n
    FROM _engine_parsed
    WHERE reason IS NULL AND kind IN ('kv_expired', 'kv_invalid')
    GROUP BY kind, rid
),
repeats AS (
    SELECT coalesce(sum(
        CASE WHEN EXISTS (
                SELECT 1 FROM engine_kv_faults AS k
                WHERE k.node = CAST($node AS VARCHAR) AND k.rid = f.rid
                    AND k.kind = replace(f.kind, 'kv_', ''))
             THEN n ELSE n - 1 END), 0) AS n
    FROM faults AS f
)
SELECT
    count(*) FILTER (WHERE kind IS NOT NULL AND reason IS NULL) - (SELECT n FROM repeats) AS loaded,
    (SELECT n FROM repeats) AS duplicates,
    count(*) FILTER (WHERE kind IS NOT NULL AND reason IS NOT NULL) AS quarantined
FROM _engine_parsed
