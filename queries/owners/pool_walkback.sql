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
    SELECT decode_node, end_ts AS t, 1 AS kind, request_id, tokens, account_id
    FROM pool
    UNION ALL
    SELECT decode_node, exposed_ts AS t, 0 AS kind, exposed_request_id AS request_id,
           0 AS tokens, NULL AS account_id
    FROM targets
),
-- The running sums run over one global order (node, then time): a window without PARTITION
-- BY streams, where a partitioned running sum costs a segment tree. Per node they are the
-- global sums less those of the nodes before it (node_base).
node_base AS (
    SELECT
        decode_node,
        upto_tokens - node_tokens AS base_cum,
        upto_pool - node_pool AS base_rn
    FROM (
        SELECT
            decode_node, node_tokens, node_pool,
            sum(node_tokens) OVER n AS upto_tokens,
            sum(node_pool) OVER n AS upto_pool
        FROM (
            SELECT decode_node, sum(tokens) AS node_tokens, sum(kind) AS node_pool
            FROM events
            GROUP BY decode_node
        ) AS per_node
        WINDOW n AS (ORDER BY decode_node ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    ) AS upto
),
running_global AS (
    SELECT
        decode_node, t, kind, request_id, account_id,
        sum(tokens) OVER w AS g_cum,
        sum(kind) OVER w AS g_rn
    FROM events
    WINDOW w AS (
        ORDER BY decode_node, t, kind, request_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    )
),
running AS (
    SELECT
        g.decode_node, g.t, g.kind, g.request_id, g.account_id,
        CAST(g.g_cum - b.base_cum AS BIGINT) AS cum,
        CAST(g.g_rn - b.base_rn AS BIGINT) AS rn
    FROM running_global AS g
    JOIN node_base AS b ON b.decode_node = g.decode_node
),
pool_ranked AS (
    SELECT decode_node, rn, cum, request_id, account_id, t AS end_ts
    FROM running
    WHERE kind = 1
),
target_hi AS (
    SELECT g.*, x.cum AS before_cum, x.rn AS hi
    FROM targets AS g
    JOIN running AS x
      ON x.kind = 0 AND x.request_id = g.exposed_request_id AND x.decode_node = g.decode_node
),
cuts AS (
    SELECT decode_node, cum AS k, 0 AS kind, NULL AS exposed_request_id FROM pool_ranked
    UNION ALL
    SELECT decode_node, before_cum - decode_capacity AS k, 1 AS kind, exposed_request_id
    FROM target_hi
),
below AS (
    SELECT
        c.kind, c.exposed_request_id,
        CAST(c.g_below - b.base_rn AS BIGINT) AS n_below
    FROM (
        SELECT
            decode_node, kind, exposed_request_id,
            sum(1 - kind) OVER (
                ORDER BY decode_node, k, kind
                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
            ) AS g_below
        FROM cuts
    ) AS c
    JOIN node_base AS b ON b.decode_node = c.decode_node
),
spans AS (
    SELECT h.exposed_request_id, h.exposed_account_id, h.exposed_ts, h.decode_node,
           b.n_below + 1 AS lo, h.hi
    FROM target_hi AS h
    JOIN below AS b ON b.kind = 1 AND b.exposed_request_id = h.exposed_request_id
    WHERE h.hi >= b.n_below + 1
),
pairs AS (
    SELECT exposed_request_id, exposed_account_id, exposed_ts, decode_node,
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
JOIN pool_ranked AS p ON p.decode_node = x.decode_node AND p.rn = x.rn
WHERE p.account_id <> x.exposed_account_id
