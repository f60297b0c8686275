-- One row per request of the case's models with ts in [window_start, window_end), with the
-- prefill capacity in force (first [[capacity]] entry in file order with role prefill whose
-- `nodes` glob matches prefill_node, a NULL node matching only "*", and whose [start, end)
-- holds ts) and its band (SPEC.md "Analyses").
WITH scoped AS (
    SELECT r.*
    FROM requests AS r
    WHERE r.model IN (SELECT model FROM case_models)
      AND r.ts >= $window_start
      AND r.ts < $window_end
),
first_match AS (
    SELECT s.request_id, min(c.ordinal) AS ordinal
    FROM scoped AS s
    JOIN case_capacity AS c
      ON c.role = 'prefill'
     AND (c.nodes = '*' OR s.prefill_node GLOB c.nodes)
     AND s.ts >= c.start_ts
     AND (c.end_ts IS NULL OR s.ts < c.end_ts)
    GROUP BY s.request_id
),
with_capacity AS (
    SELECT
        s.request_id, s.ts, s.ts_end, s.account_id, s.model, s.prompt_tokens,
        s.completion_tokens, s.status, s.prefill_node, s.decode_node,
        c.tokens AS capacity,
        x.reason AS exclusion_reason,
        coalesce(s.status, $default_status) IN (SELECT status FROM case_success_status)
            AS delivered
    FROM scoped AS s
    LEFT JOIN first_match AS f ON f.request_id = s.request_id
    LEFT JOIN case_capacity AS c ON c.ordinal = f.ordinal
    LEFT JOIN case_exclusions AS x ON x.account_id = s.account_id
)
SELECT
    request_id, ts, ts_end, account_id, model, prompt_tokens, completion_tokens, status,
    prefill_node, decode_node,
    CAST(capacity AS BIGINT) AS capacity,
    CASE
        WHEN prompt_tokens > $context_window THEN 'over_context'
        WHEN capacity IS NULL THEN 'unknown_capacity'
        WHEN prompt_tokens <= capacity THEN 'fits'
        WHEN NOT delivered THEN 'over_capacity_failed'
        WHEN exclusion_reason IS NOT NULL THEN 'excluded'
        ELSE 'exposed'
    END AS band,
    exclusion_reason
FROM with_capacity
