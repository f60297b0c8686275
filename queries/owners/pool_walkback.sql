-- Data owners, policy pool-walkback (SPEC.md "Analyses"). The pool of a decode node: the
-- requests of the case's models that arrived inside the window and were served on it with a
-- success status; each ends at coalesce(ts_end, ts) and holds prompt + completion tokens.
-- Per node, the pool ordered by (end, request_id) gets a running token sum R. For an exposed
-- request e: the pool requests that ended strictly before e.ts hold T(e) tokens. Walking
-- back newest first, the tokens of the newer candidates before c are T(e) - R(c), so c is a
-- candidate while R(c) > T(e) - capacity: the candidates are the pool requests that ended
-- before e.ts with R in (T(e) - capacity, T(e)]. T(e) comes from the same running sum, e
-- merged into its node's stream just before the requests that ended at e.ts. R cut into
-- buckets of one capacity's width puts the candidates in at most two buckets: an equality
-- join on (node, capacity, bucket), no range join, so the cost stays n log n however many
-- exposed requests there are. Candidates of another account than e's are its data owners.
-- Only the nodes of attributable exposed requests matter (a pool ranks its own node only);
-- a capacity <= 0 leaves no candidate. The sort partitions on an integer node id, not the
-- node's name: text sort keys cost several times more. Token sums are HUGEINT (DECIMAL(38, 0)
-- on Spark): prompt + completion and the running sums never overflow, whatever the counts.
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
        CAST(r.prompt_tokens AS HUGEINT) + coalesce(r.completion_tokens, 0) AS tokens
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
    SELECT nid, t, kind, request_id, account_id, cum
    FROM (
        SELECT
            nid, t, kind, request_id, account_id,
            sum(tokens) OVER w AS cum
        FROM events
        WINDOW w AS (
            PARTITION BY nid ORDER BY t, kind, request_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        )
    ) AS s
),
pool_ranked AS (
    SELECT nid, cum, request_id, account_id, t AS end_ts
    FROM running
    WHERE kind = 1
),
target_cum AS (
    SELECT g.*, x.nid, x.cum AS before_cum
    FROM targets AS g
    JOIN running AS x ON x.kind = 0 AND x.request_id = g.exposed_request_id
    WHERE g.decode_capacity > 0
),
capacities AS (
    SELECT DISTINCT nid, decode_capacity AS cap FROM target_cum
),
spans AS (
    SELECT
        exposed_request_id, exposed_account_id, exposed_ts, decode_node, nid,
        decode_capacity AS cap,
        before_cum - decode_capacity AS cut,
        -- (cut, before_cum] spans one capacity: at most two buckets, the cut's and the sum's
        unnest(CASE
            WHEN greatest(before_cum - decode_capacity, 0) // decode_capacity
                = before_cum // decode_capacity
            THEN [before_cum // decode_capacity]
            ELSE [
                greatest(before_cum - decode_capacity, 0) // decode_capacity,
                before_cum // decode_capacity
            ]
        END) AS bucket
    FROM target_cum
),
bucketed AS (
    SELECT p.*, c.cap, p.cum // c.cap AS bucket
    FROM pool_ranked AS p
    JOIN capacities AS c ON c.nid = p.nid
)
SELECT
    x.exposed_request_id,
    x.exposed_account_id,
    x.exposed_ts,
    x.decode_node,
    p.request_id AS owner_request_id,
    p.account_id AS owner_account_id,
    p.end_ts AS owner_end_ts
FROM spans AS x
JOIN bucketed AS p ON p.nid = x.nid AND p.cap = x.cap AND p.bucket = x.bucket
WHERE p.end_ts < x.exposed_ts
  AND p.cum > x.cut
  AND p.account_id <> x.exposed_account_id
