-- Data owners, policy pool-walkback (SPEC.md "Analyses"). The pool of a decode node: the
-- requests of the case's models that arrived inside the window and were served on it with a
-- success status; each ends at coalesce(ts_end, ts) and holds prompt + completion tokens.
-- Per node, the pool ordered by (end, request_id) gets a rank rn and a running token sum R.
-- For an exposed request e: hi = the pool requests that ended strictly before e.ts and
-- T(e) = their tokens. Walking back newest first, the tokens of the newer candidates before
-- c are T(e) - R(c), so c is a candidate while R(c) > T(e) - capacity; R grows with rn, so
-- the candidates are the ranks lo..hi, lo = 1 + the pool requests with R <= T(e) - capacity.
-- Both counts come from running sums over merged event streams (no range join: the cost
-- stays n log n however many exposed requests there are); the ranks are then expanded and
-- joined back on (node, rn). Candidates of another account than e's are its data owners.
-- Only the nodes of attributable exposed requests matter (a pool ranks its own node only).
-- The sorts partition on an integer node id, not the node's name: text sort keys cost
-- several times more.
WITH targets AS (
    SELECT * FROM attribution_targets
    WHERE decode_node IS NOT NULL AND decode_capacity IS NOT NULL
),
nodes AS (
    SELECT decode_node, row_number() OVER (ORDER BY decode_node) AS nid
    FROM (SELECT DISTINCT decode_node FROM targets) AS d
),
pool AS (
    SELECT
        n.nid, r.request_id, r.account_id,
        coalesce(r.ts_end, r.ts) AS end_ts,
        r.prompt_tokens + coalesce(r.completion_tokens, 0) AS tokens
    FROM requests AS r
    JOIN nodes AS n ON n.decode_node = r.decode_node
    WHERE r.model IN (SELECT model FROM case_models)
      AND r.ts >= $window_start
      AND r.ts < $window_end
      AND coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
),
events AS (
    SELECT nid, end_ts AS t, 1 AS kind, request_id, tokens, account_id
    FROM pool
    UNION ALL
    SELECT n.nid, g.exposed_ts AS t, 0 AS kind, g.exposed_request_id AS request_id,
           0 AS tokens, NULL AS account_id
    FROM targets AS g
    JOIN nodes AS n ON n.decode_node = g.decode_node
),
running AS (
    SELECT nid, t, kind, request_id, account_id, CAST(cum AS BIGINT) AS cum,
           CAST(rn AS BIGINT) AS rn
    FROM (
        SELECT
            nid, t, kind, request_id, account_id,
            sum(tokens) OVER w AS cum,
            sum(kind) OVER w AS rn
        FROM events
        WINDOW w AS (
            PARTITION BY nid ORDER BY t, kind, request_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        )
    ) AS s
),
pool_ranked AS (
    SELECT nid, rn, cum, request_id, account_id, t AS end_ts
    FROM running
    WHERE kind = 1
),
target_hi AS (
    SELECT g.*, x.nid, x.cum AS before_cum, x.rn AS hi
    FROM targets AS g
    JOIN running AS x ON x.kind = 0 AND x.request_id = g.exposed_request_id
),
cuts AS (
    SELECT nid, cum AS k, 0 AS kind, NULL AS exposed_request_id FROM pool_ranked
    UNION ALL
    SELECT nid, before_cum - decode_capacity AS k, 1 AS kind, exposed_request_id
    FROM target_hi
),
below AS (
    SELECT exposed_request_id, CAST(n_below AS BIGINT) AS n_below
    FROM (
        SELECT
            kind, exposed_request_id,
            sum(1 - kind) OVER (
                PARTITION BY nid ORDER BY k, kind
                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
            ) AS n_below
        FROM cuts
    ) AS c
    WHERE kind = 1
),
spans AS (
    SELECT h.exposed_request_id, h.exposed_account_id, h.exposed_ts, h.decode_node, h.nid,
           b.n_below + 1 AS lo, h.hi
    FROM target_hi AS h
    JOIN below AS b ON b.exposed_request_id = h.exposed_request_id
    WHERE h.hi >= b.n_below + 1
),
pairs AS (
    SELECT exposed_request_id, exposed_account_id, exposed_ts, decode_node, nid,
           unnest(range(lo, hi + 1)) AS rn
    FROM spans
)
SELECT
    x.exposed_request_id,
    x.exposed_account_id,
    x.exposed_ts,
    x.decode_node,
    p.request_id AS owner_request_id,
    p.account_id AS owner_account_id,
    p.end_ts AS owner_end_ts
FROM pairs AS x
JOIN pool_ranked AS p ON p.nid = x.nid AND p.rn = x.rn
WHERE p.account_id <> x.exposed_account_id
