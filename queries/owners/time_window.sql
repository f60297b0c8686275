-- Data owners, policy time-window: the pool requests (as in owners_pool_walkback) of another
-- account that finished on the exposed request's decode node within $lookback before its ts
-- (an exposed request: a row of `attribution_targets`, band exposed or excluded).
-- End times are cut into slots of $lookback_seconds (>= $lookback): the candidates of e lie
-- in the slots from that of e.ts - $lookback to that of e.ts, so the join is on (node, slot),
-- an equality, with the time range checked on the pairs it gives (a join on the node alone,
-- with the range as its condition, compared every exposed request with the node's whole
-- pool: quadratic).
WITH pool AS (
    SELECT
        r.request_id, r.account_id, r.decode_node,
        coalesce(r.ts_end, r.ts) AS end_ts
    FROM bands AS r  -- the requests of the case's models inside the window
    WHERE r.decode_node IN (SELECT decode_node FROM attribution_targets)
      AND coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
),
spans AS (
    SELECT
        exposed_request_id, exposed_account_id, exposed_ts, decode_node, exposed_band,
        unnest(range(
            CAST(epoch(exposed_ts - $lookback) AS BIGINT) // $lookback_seconds,
            CAST(epoch(exposed_ts) AS BIGINT) // $lookback_seconds + 1
        )) AS slot
    FROM attribution_targets
    WHERE decode_node IS NOT NULL
)
SELECT
    g.exposed_request_id,
    g.exposed_account_id,
    g.exposed_ts,
    g.decode_node,
    p.request_id AS owner_request_id,
    p.account_id AS owner_account_id,
    p.end_ts AS owner_end_ts,
    g.exposed_band
FROM spans AS g
JOIN pool AS p
  ON p.decode_node = g.decode_node
 AND CAST(epoch(p.end_ts) AS BIGINT) // $lookback_seconds = g.slot
WHERE p.end_ts < g.exposed_ts
  AND p.end_ts >= g.exposed_ts - $lookback
  AND p.account_id <> g.exposed_account_id
