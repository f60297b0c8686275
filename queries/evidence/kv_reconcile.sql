-- Requests with a KV transfer fault (engine_kv_fault_requests) against the gateway's exposed
-- requests (bands): matched (exposed and faulted) or engine_only (faulted, not exposed), one
-- row per (side, reason). An engine_only reason says first what explains the fault as the
-- exposure range does (uncertainty/engine_kv_only.sql: an excluded account, or a gateway
-- status not in success_status: the response was not delivered), whatever its band; else why
-- the gateway does not count it (no gateway record, outside the window or models, the band).
-- A fault is evidence for a request; its absence is none against one, so an exposed request
-- without a fault is not listed here.
WITH sided AS (
    SELECT
        CASE WHEN b.band = 'exposed' THEN 'matched' ELSE 'engine_only' END AS side,
        CASE
            WHEN b.band = 'exposed' THEN 'exposed and a KV transfer fault in the engine logs'
            WHEN f.request_id IS NULL THEN 'KV transfer fault: no gateway request with this id'
            WHEN x.account_id IS NOT NULL
                THEN 'KV transfer fault: excluded account ('
                    || coalesce(x.reason, 'no reason') || ')'
            WHEN r.request_id IS NOT NULL AND s.status IS NULL
                THEN 'KV transfer fault: gateway status '
                    || coalesce(CAST(r.status AS VARCHAR), 'unknown')
                    || ': response not delivered to the client (band '
                    || coalesce(b.band, 'none') || ')'
            WHEN b.band IS NULL
                THEN 'KV transfer fault: gateway request outside the case window or models'
            ELSE 'KV transfer fault: gateway band ' || b.band
        END AS reason,
        coalesce(f.request_id, f.ext_rid) AS shown
    FROM engine_kv_fault_requests AS f
    LEFT JOIN case_requests AS r ON r.request_id = f.request_id
    LEFT JOIN bands AS b ON b.request_id = f.request_id
    LEFT JOIN case_exclusions AS x ON x.account_id = r.account_id
    LEFT JOIN (SELECT DISTINCT status FROM case_success_status) AS s
      ON s.status = coalesce(r.status, $default_status)
)
SELECT side, reason, count(*) AS n, list(shown ORDER BY shown) AS request_ids
FROM sided
GROUP BY side, reason
ORDER BY side, reason
