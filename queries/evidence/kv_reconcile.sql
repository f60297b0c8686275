-- Requests with a KV transfer fault (engine_kv_fault_requests) against the gateway's exposed
-- requests (bands): matched (exposed and faulted) or engine_only (faulted, not exposed: no
-- gateway record, an excluded account, an undelivered response, or the band), one row per
-- (side, reason). A fault is evidence for a request; its absence is none against one, so an
-- exposed request without a fault is not listed here.
WITH sided AS (
    SELECT
        CASE WHEN b.band = 'exposed' THEN 'matched' ELSE 'engine_only' END AS side,
        CASE
            WHEN b.band = 'exposed' THEN 'exposed and a KV transfer fault in the engine logs'
            WHEN f.request_id IS NULL THEN 'KV transfer fault: no gateway request with this id'
            WHEN b.band IS NULL
                THEN 'KV transfer fault: gateway request outside the case window or models'
            WHEN b.band = 'excluded'
                THEN 'KV transfer fault: excluded account ('
                    || coalesce(b.exclusion_reason, 'no reason') || ')'
            WHEN b.band = 'over_capacity_failed'
                THEN 'KV transfer fault: gateway status '
                    || coalesce(CAST(b.status AS VARCHAR), 'unknown')
                    || ': response not delivered to the client (band over_capacity_failed)'
            ELSE 'KV transfer fault: gateway band ' || b.band
        END AS reason,
        coalesce(f.request_id, f.ext_rid) AS shown
    FROM engine_kv_fault_requests AS f
    LEFT JOIN bands AS b ON b.request_id = f.request_id
)
SELECT side, reason, count(*) AS n, list(shown ORDER BY shown) AS request_ids
FROM sided
GROUP BY side, reason
ORDER BY side, reason
