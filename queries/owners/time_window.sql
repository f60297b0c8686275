-- Data owners, policy time-window: the pool requests (as in owners_pool_walkback) of another
-- account that finished on the exposed request's decode node within $lookback before its ts.
WITH pool AS (
    SELECT
        r.request_id, r.account_id, r.decode_node,
        coalesce(r.ts_end, r.ts) AS end_ts
    FROM requests AS r
    WHERE r.decode_node IN (SELECT decode_node FROM attribution_targets)
      AND r.model IN (SELECT model FROM case_models)
      AND r.ts >= $window_start
      AND r.ts < $window_end
      AND coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
)
SELECT
    g.exposed_request_id,
    g.exposed_account_id,
    g.exposed_ts,
    g.decode_node,
    p.request_id AS owner_request_id,
    p.account_id AS owner_account_id,
    p.end_ts AS owner_end_ts
FROM attribution_targets AS g
JOIN pool AS p
  ON p.decode_node = g.decode_node
 AND p.end_ts < g.exposed_ts
 AND p.end_ts >= g.exposed_ts - $lookback
WHERE p.account_id <> g.exposed_account_id
