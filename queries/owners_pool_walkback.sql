-- Data owners, policy pool-walkback (SPEC.md "Analyses"). The pool of a decode node: the
-- requests of the case's models that arrived inside the window and were served on it with a
-- success status; each ends at coalesce(ts_end, ts) and holds prompt + completion tokens.
-- Per node, a running sum R over the pool ordered by (end, request_id) and, for an exposed
-- request e, T(e) = the pool tokens that ended strictly before e.ts. Walking back newest first,
-- the tokens of the newer candidates before c are T(e) - R(c), so c is a candidate while
-- R(c) > T(e) - capacity. Candidates of another account than e's are its data owners.
WITH pool AS (
    SELECT
        r.request_id, r.account_id, r.decode_node,
        coalesce(r.ts_end, r.ts) AS end_ts,
        r.prompt_tokens + coalesce(r.completion_tokens, 0) AS tokens
    FROM requests AS r
    WHERE r.decode_node IN (SELECT decode_node FROM attribution_targets)
      AND r.model IN (SELECT model FROM case_models)
      AND r.ts >= $window_start
      AND r.ts < $window_end
      AND coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
),
targets AS (
    SELECT * FROM attribution_targets
    WHERE decode_node IS NOT NULL AND decode_capacity IS NOT NULL
),
events AS (
    SELECT decode_node, end_ts AS t, 1 AS kind, request_id, tokens FROM pool
    UNION ALL
    SELECT decode_node, exposed_ts AS t, 0 AS kind, exposed_request_id AS request_id,
           0 AS tokens
    FROM targets
),
running AS (
    SELECT
        decode_node, t, kind, request_id,
        sum(tokens) OVER (
            PARTITION BY decode_node ORDER BY t, kind, request_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS cum
    FROM events
),
pool_cum AS (
    SELECT p.*, x.cum
    FROM pool AS p
    JOIN running AS x ON x.kind = 1 AND x.request_id = p.request_id
),
target_cum AS (
    SELECT g.*, x.cum
    FROM targets AS g
    JOIN running AS x ON x.kind = 0 AND x.request_id = g.exposed_request_id
)
SELECT
    g.exposed_request_id,
    g.exposed_account_id,
    g.exposed_ts,
    g.decode_node,
    p.request_id AS owner_request_id,
    p.account_id AS owner_account_id,
    p.end_ts AS owner_end_ts
FROM target_cum AS g
JOIN pool_cum AS p
  ON p.decode_node = g.decode_node
 AND p.end_ts < g.exposed_ts
 AND p.cum > g.cum - g.decode_capacity
WHERE p.account_id <> g.exposed_account_id
