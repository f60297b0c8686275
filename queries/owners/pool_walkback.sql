-- Data owners, policy pool-walkback (docs/decisions.md "Data owners"). The pool of a decode
-- node: the requests of the case's models that arrived inside the window (the rows of `bands`)
-- and were served on it with a success status; each ends at coalesce(ts_end, ts) and holds prompt +
-- completion tokens.
-- Per node, the pool ordered by (end, request_id) has a running token sum R. For an exposed
-- request e: the pool requests that ended strictly before e.ts hold T(e) tokens. Walking
-- back newest first, the tokens of the newer candidates before c are T(e) - R(c), so c is a
-- candidate while R(c) > T(e) - capacity (the cut): the candidates are the pool requests
-- that ended before e.ts with R in (cut, T(e)]. Candidates of another account than e's are
-- its data owners. A capacity <= 0 leaves no candidate.
--
-- No window runs over the whole pool (at 100M requests one did: 38M wide rows sorted with
-- their ids, 4.8 GB spilled): the running sum is cut at slots, `width` seconds of end time
-- (about $slot_rows pool requests per node and slot). The slots' token totals (an aggregate)
-- and their running sum (a window over the small slot table) give base(s), the tokens of
-- the node's pool before slot s; T(e) is base(slot of e.ts) plus the tokens of that slot's
-- requests that ended before e.ts (an equality join on node and slot). The slots holding
-- candidates of e are its own slot and the earlier ones whose top (base + total) is in
-- (cut, T(e)]: top cut into buckets of one capacity's width puts those in at most two
-- buckets, an equality join. In a slot whose base is above the cut every request is a
-- candidate; only in the slot holding the cut (and e's own slot when the cut falls in it)
-- is R needed, from a window over the requests of those few slots. So the cost is an
-- aggregate and equality joins over the pool, n log n however many exposed requests there
-- are and however little memory. `width` only sets the cost, never the result: any slot
-- width gives the same owners.
-- The pool is read once per use (`pool` is inlined) from `bands` (already cut to the case's
-- models and window: 40% of `requests` in the sample cases), through `pool_keys`, a small
-- table of the (node, status) a pool request may have: each read is then a scan joined to a
-- CTE, which DuckDB streams, where the same filtered scan repeated would be materialized.
-- Nodes are numbered: an integer key joins and sorts faster than the node's name.
-- Token sums are HUGEINT (DECIMAL(38, 0) on Spark): prompt + completion and the running
-- sums never overflow, whatever the counts.
WITH targets AS (
    SELECT * FROM attribution_targets
    WHERE decode_node IS NOT NULL AND decode_capacity IS NOT NULL
),
nodes AS (
    SELECT decode_node, row_number() OVER (ORDER BY decode_node) AS nid
    FROM (SELECT DISTINCT decode_node FROM targets) AS d
),
width AS (
    -- slot width in whole seconds: the window's duration over the expected slots per node
    SELECT greatest(CAST(
        (epoch($window_end) - epoch($window_start)) * $slot_rows * (SELECT count(*) FROM nodes)
        / greatest((SELECT count(*) FROM bands), 1) AS BIGINT), 1) AS seconds
),
pool_keys AS (
    SELECT n.decode_node, n.nid, s.status, w.seconds
    FROM nodes AS n
    CROSS JOIN (SELECT DISTINCT status FROM case_success_status) AS s
    CROSS JOIN width AS w
),
pool AS NOT MATERIALIZED (
    SELECT
        k.nid, r.request_id, r.account_id,
        coalesce(r.ts_end, r.ts) AS end_ts,
        CAST(epoch(coalesce(r.ts_end, r.ts)) AS BIGINT) // k.seconds AS slot,
        CAST(r.prompt_tokens AS HUGEINT) + coalesce(r.completion_tokens, 0) AS tokens
    FROM bands AS r
    JOIN pool_keys AS k
      ON k.decode_node = r.decode_node
     AND k.status = coalesce(r.status, $default_status)
),
points AS (
    SELECT g.*, n.nid, CAST(epoch(g.exposed_ts) AS BIGINT) // w.seconds AS slot
    FROM targets AS g
    JOIN nodes AS n ON n.decode_node = g.decode_node
    CROSS JOIN width AS w
),
slots AS (
    -- every slot holding a pool request or an exposed request: its tokens, and the tokens
    -- of the node's pool in the slots before it
    SELECT nid, slot, total,
        CAST(coalesce(sum(total) OVER (
            PARTITION BY nid ORDER BY slot ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS HUGEINT) AS base
    FROM (
        SELECT nid, slot, CAST(sum(tokens) AS HUGEINT) AS total
        FROM (
            SELECT nid, slot, tokens FROM pool
            UNION ALL
            SELECT nid, slot, 0 AS tokens FROM points
        ) AS e
        GROUP BY nid, slot
    ) AS t
),
own AS (
    -- tokens of the pool requests in e's slot that ended before e.ts
    SELECT g.exposed_request_id, CAST(sum(p.tokens) AS HUGEINT) AS tokens
    FROM points AS g
    JOIN pool AS p ON p.nid = g.nid AND p.slot = g.slot AND p.end_ts < g.exposed_ts
    GROUP BY g.exposed_request_id
),
target_cum AS (
    SELECT g.*, s.base AS own_base, s.base + coalesce(o.tokens, 0) AS before_cum
    FROM points AS g
    JOIN slots AS s ON s.nid = g.nid AND s.slot = g.slot
    LEFT JOIN own AS o ON o.exposed_request_id = g.exposed_request_id
    WHERE g.decode_capacity > 0
),
capacities AS (
    SELECT DISTINCT nid, decode_capacity AS cap FROM target_cum
),
bucketed AS (
    SELECT s.nid, s.slot, s.base, s.base + s.total AS top, c.cap,
        (s.base + s.total) // c.cap AS bucket
    FROM slots AS s
    JOIN capacities AS c ON c.nid = s.nid
),
spans AS (
    SELECT
        exposed_request_id, exposed_account_id, exposed_ts, decode_node, exposed_band, nid,
        slot, decode_capacity AS cap,
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
slot_spans AS (
    -- (e, slot) for every slot that may hold a candidate of e, with the slot's base
    SELECT x.exposed_request_id, x.exposed_account_id, x.exposed_ts, x.decode_node,
        x.exposed_band, x.nid, b.slot, b.base, x.cut
    FROM spans AS x
    JOIN bucketed AS b ON b.nid = x.nid AND b.cap = x.cap AND b.bucket = x.bucket
    WHERE b.slot < x.slot AND b.top > x.cut
    UNION ALL
    SELECT exposed_request_id, exposed_account_id, exposed_ts, decode_node, exposed_band, nid,
        slot, own_base AS base, before_cum - decode_capacity AS cut
    FROM target_cum
),
cut_slots AS (
    SELECT DISTINCT nid, slot FROM slot_spans WHERE base <= cut
),
within AS (
    -- R - base for the requests of the slots holding a cut
    SELECT p.nid, p.slot, p.request_id, p.account_id, p.end_ts,
        CAST(sum(p.tokens) OVER (
            PARTITION BY p.nid, p.slot ORDER BY p.end_ts, p.request_id
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS HUGEINT) AS w
    FROM pool AS p
    JOIN cut_slots AS c ON c.nid = p.nid AND c.slot = p.slot
)
SELECT
    x.exposed_request_id,
    x.exposed_account_id,
    x.exposed_ts,
    x.decode_node,
    p.request_id AS owner_request_id,
    p.account_id AS owner_account_id,
    p.end_ts AS owner_end_ts,
    x.exposed_band
FROM slot_spans AS x
JOIN pool AS p ON p.nid = x.nid AND p.slot = x.slot
WHERE x.base > x.cut
  AND p.end_ts < x.exposed_ts
  AND p.account_id <> x.exposed_account_id
UNION ALL
SELECT
    x.exposed_request_id,
    x.exposed_account_id,
    x.exposed_ts,
    x.decode_node,
    p.request_id AS owner_request_id,
    p.account_id AS owner_account_id,
    p.end_ts AS owner_end_ts,
    x.exposed_band
FROM slot_spans AS x
JOIN within AS p ON p.nid = x.nid AND p.slot = x.slot
WHERE x.base <= x.cut
  AND p.end_ts < x.exposed_ts
  AND x.base + p.w > x.cut
  AND p.account_id <> x.exposed_account_id
