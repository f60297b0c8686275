-- KV transfer faults of one log (kind kv_expired / kv_invalid) for engine_kv_faults: one
-- row per (node, request, kind), at its first line; `lines` counts the lines that repeat it
-- (every worker process of the node prints its own). A request already in the table for
-- this node and kind (from another file of the node) is not added twice. ext_rid: the id
-- less vLLM's `-<8 hex>` suffix (0.17+ internal ids); reconciliation matches either.
WITH f AS (
    SELECT
        replace(kind, 'kv_', '') AS kind, rid, min(ts) AS ts, count(*) AS lines,
        arg_min(source_row, (ts, source_row)) AS source_row
    FROM _engine_parsed
    WHERE reason IS NULL AND kind IN ('kv_expired', 'kv_invalid')
    GROUP BY kind, rid
)
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, ts, rid,
    CASE WHEN regexp_matches(rid, '^.+-[0-9a-f]{8}$') THEN regexp_replace(rid, '-[0-9a-f]{8}$', '')
         ELSE rid END AS ext_rid,
    kind, lines, CAST($source AS VARCHAR) AS source, source_row
FROM f
WHERE NOT EXISTS (
    SELECT 1 FROM engine_kv_faults AS k
    WHERE k.node = CAST($node AS VARCHAR) AND k.rid = f.rid AND k.kind = f.kind
)
