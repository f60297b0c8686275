-- evidence/kv_faults without gateway requests: one row per faulted request, none matched.
SELECT
    ext_rid, min(rid) AS rid, bool_or(kind = 'expired') AS expired,
    bool_or(kind = 'invalid') AS invalid, min(ts) AS ts, min(node) AS node,
    CAST(NULL AS VARCHAR) AS request_id
FROM case_engine_kv_faults
GROUP BY ext_rid
