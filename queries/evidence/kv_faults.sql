-- Requests with a KV transfer fault in the engine logs (engine_kv_faults: the prefill
-- released expired KV blocks, or a decode worker read blocks the prefill no longer knew:
-- vLLM NixlConnector), one row per request (ext_rid), matched to the gateway's request: its
-- request_id is the id the engine printed, that id less vLLM's `-<8 hex>` suffix (ext_rid,
-- 0.17+), or ext_rid less the OpenAI server's `chatcmpl-` / `cmpl-` prefix (the
-- X-Request-Id the gateway sent), in that order.
WITH faults AS (
    SELECT
        ext_rid, min(rid) AS rid, bool_or(kind = 'expired') AS expired,
        bool_or(kind = 'invalid') AS invalid, min(ts) AS ts, min(node) AS node
    FROM case_engine_kv_faults
    GROUP BY ext_rid
)
SELECT
    f.ext_rid, f.rid, f.expired, f.invalid, f.ts, f.node,
    coalesce(r1.request_id, r2.request_id, r3.request_id) AS request_id
FROM faults AS f
LEFT JOIN case_requests AS r1 ON r1.request_id = f.rid
LEFT JOIN case_requests AS r2 ON r2.request_id = f.ext_rid
LEFT JOIN case_requests AS r3 ON r3.request_id = regexp_replace(f.ext_rid, '^(chatcmpl|cmpl)-', '')
