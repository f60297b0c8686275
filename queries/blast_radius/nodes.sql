-- The blast radius per model and prefill node: every request of the case's logs (any model,
-- any time; the inputs the case does not name left out), with the prefill
-- capacity in force for it (docs/decisions.md "Blast radius"):
-- - the [[capacity]] entry in force for its prefill node and model at its ts
--   (`case_requests_in_force`, exposure/requests_in_force.sql): what the bands use;
-- - for a model not of the case that no entry holds, the engine's own prefill capacity for
--   its node at its ts (`blast_radius_engine`, from the engine logs; empty without them).
-- A request is over capacity as the bands judge one, exclusions aside: a success status
-- (the default where none is logged), prompt >= the capacity's reject_from (else tokens + 1)
-- and prompt <= the context window. `excluded`: those of an excluded account;
-- `unknown_capacity`: requests with no capacity in force (any status and size).
WITH judged AS (
    SELECT
        r.model,
        r.prefill_node,
        r.ts,
        r.prompt_tokens,
        CASE
            WHEN r.capacity IS NOT NULL THEN r.over_from
            WHEN m.model IS NULL THEN coalesce(e.reject_from, e.tokens + 1)
        END AS over_from,
        coalesce(r.status, $default_status) IN (SELECT status FROM case_success_status)
            AS delivered,
        x.account_id IS NOT NULL AS excluded
    FROM case_requests_in_force AS r
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
