-- Category engine_only (direction max), KV transfer faults: requests the engine logs show
-- with a KV transfer fault (engine_kv_fault_requests) that no exposed gateway request is and
-- that no gateway record explains (an excluded account, or a status not in success_status):
-- no gateway record, a record outside the window or models, or one the bands do not call
-- exposed could be an exposed response the gateway count misses. request_id: the gateway's,
-- else the id the engine printed (less vLLM's suffix).
WITH per_request AS (
    SELECT
        f.ext_rid,
        f.request_id,
        b.band = 'exposed' AS matched,
        x.account_id IS NOT NULL OR (r.request_id IS NOT NULL AND s.status IS NULL) AS explained
    FROM engine_kv_fault_requests AS f
    LEFT JOIN case_requests AS r ON r.request_id = f.request_id
    LEFT JOIN bands AS b ON b.request_id = f.request_id
    LEFT JOIN case_exclusions AS x ON x.account_id = r.account_id
    LEFT JOIN (SELECT DISTINCT status FROM case_success_status) AS s
      ON s.status = coalesce(r.status, $default_status)
)
SELECT
    'engine_only' AS category,
    'max' AS direction,
    coalesce(request_id, ext_rid) AS request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM per_request
WHERE NOT coalesce(matched, FALSE) AND NOT coalesce(explained, FALSE)
