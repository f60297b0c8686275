-- The blast radius per model and prefill node: every request of the case's logs (any model,
-- any time; `case_requests`: not the inputs the case does not name), with the prefill
-- capacity in force for it (docs/decisions.md "Blast radius"):
-- - the first [[capacity]] entry in file order with role prefill whose `nodes` glob matches
--   its prefill node (a NULL node matching only "*"), whose `models` glob, if any, matches
--   its model and whose [start, end) holds its ts: what the bands use for the case's models;
-- - for a model not of the case that no entry holds, the engine's own prefill capacity for
--   its node at its ts (`blast_radius_engine`, from the engine logs; empty without them).
-- A request is over capacity as the bands judge one, exclusions aside: a success status
-- (the default where none is logged), prompt >= the capacity's reject_from (else tokens + 1)
-- and prompt <= the context window. `excluded`: those of an excluded account;
-- `unknown_capacity`: requests with no capacity in force (any status and size).
WITH pairs AS (
    SELECT DISTINCT prefill_node, model FROM case_requests
),
node_entries AS (
    SELECT p.prefill_node, p.model, c.ordinal, c.start_ts, c.end_ts
    FROM pairs AS p
    JOIN case_capacity AS c
      ON c.role = 'prefill'
     AND (c.nodes = '*' OR p.prefill_node GLOB c.nodes_glob)
     AND (c.models_glob IS NULL OR p.model GLOB c.models_glob)
),
edges AS (
    SELECT prefill_node, model, start_ts AS edge FROM node_entries WHERE start_ts IS NOT NULL
    UNION
    SELECT prefill_node, model, end_ts AS edge FROM node_entries WHERE end_ts IS NOT NULL
),
segments AS (
    SELECT
        prefill_node,
        model,
        edge AS seg_start,
        lead(edge) OVER (PARTITION BY prefill_node, model ORDER BY edge) AS seg_end
    FROM edges
),
first_match AS (
    SELECT g.prefill_node, g.model, g.seg_start, g.seg_end, min(e.ordinal) AS ordinal
    FROM segments AS g
    JOIN node_entries AS e
      ON e.prefill_node IS NOT DISTINCT FROM g.prefill_node
     AND e.model = g.model
     AND e.start_ts <= g.seg_start
     AND (e.end_ts IS NULL OR (g.seg_end IS NOT NULL AND g.seg_end <= e.end_ts))
    GROUP BY g.prefill_node, g.model, g.seg_start, g.seg_end
),
judged AS (
    SELECT
        r.model,
        r.prefill_node,
        r.ts,
        r.prompt_tokens,
        CASE
            WHEN c.ordinal IS NOT NULL THEN coalesce(c.reject_from, c.tokens + 1)
            WHEN m.model IS NULL THEN coalesce(e.reject_from, e.tokens + 1)
        END AS over_from,
        coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
            AS delivered,
        x.account_id IS NOT NULL AS excluded
    FROM case_requests AS r
    LEFT JOIN first_match AS f
      ON f.prefill_node IS NOT DISTINCT FROM r.prefill_node
     AND f.model = r.model
     AND r.ts >= f.seg_start
     AND (f.seg_end IS NULL OR r.ts < f.seg_end)
    LEFT JOIN case_capacity AS c ON c.ordinal = f.ordinal
    LEFT JOIN (SELECT DISTINCT model FROM case_models) AS m ON m.model = r.model
    LEFT JOIN blast_radius_engine AS e
      ON e.node = r.prefill_node
     AND r.ts >= e.start_ts
     AND (e.end_ts IS NULL OR r.ts < e.end_ts)
    LEFT JOIN case_exclusions AS x ON x.account_id = r.account_id
),
marked AS (
    SELECT
        model,
        prefill_node,
        ts,
        excluded,
        over_from IS NOT NULL AS known,
        coalesce(
            delivered AND prompt_tokens >= over_from AND prompt_tokens <= $context_window,
            FALSE
        ) AS over
    FROM judged
)
SELECT
    model,
    prefill_node,
    count(*) AS requests,
    count(*) FILTER (WHERE over) AS over_capacity,
    count(*) FILTER (WHERE over AND excluded) AS excluded,
    count(*) FILTER (WHERE NOT known) AS unknown_capacity,
    min(ts) FILTER (WHERE over) AS first_over,
    max(ts) FILTER (WHERE over) AS last_over,
    count(*) FILTER (WHERE over AND ts >= $window_start AND ts < $window_end) AS in_window,
    count(*) FILTER (WHERE over AND (ts < $window_start OR ts >= $window_end))
        AS outside_window
FROM marked
GROUP BY model, prefill_node
