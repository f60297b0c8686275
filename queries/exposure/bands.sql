-- One row per request of the case's models with ts in [window_start, window_end), with the
-- prefill capacity in force (first [[capacity]] entry in file order with role prefill whose
-- `nodes` glob matches prefill_node, a NULL node matching only "*", whose `models` glob, if
-- any, matches the model, and whose [start, end) holds ts) and its band (docs/decisions.md "Bands"). over_from is the smallest prompt over that
-- capacity: the entry's reject_from (the engine's admission limit), else tokens + 1; a
-- prompt fits when prompt_tokens < over_from. prompt_tokens is the length that decides: the
-- engine's own input length where its logs give one (`engine_lengths`, also in
-- engine_prompt_tokens), else the gateway's (gateway_prompt_tokens, always the record's).
WITH scoped AS (
    SELECT r.*
    FROM case_requests AS r
    WHERE r.model IN (SELECT model FROM case_models)
      AND r.ts >= $window_start
      AND r.ts < $window_end
),
-- The capacity timeline of each prefill node and model cut at every start and end of the
-- entries that match it: inside one segment the same entries are in force, so the first
-- match is found per segment (a handful of rows) and each request joins the one segment
-- holding its ts. (every node of `case_requests`, not just those of `scoped`: a CTE read twice,
-- or the same filtered scan twice, is materialized, i.e. a full-width copy of the requests
-- in scope)
node_entries AS (
    SELECT n.prefill_node, n.model, c.ordinal, c.start_ts, c.end_ts
    FROM (SELECT DISTINCT prefill_node, model FROM case_requests) AS n
    JOIN case_capacity AS c
      ON c.role = 'prefill'
     AND (c.nodes = '*' OR n.prefill_node GLOB c.nodes_glob)
     AND (c.models_glob IS NULL OR n.model GLOB c.models_glob)
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
with_capacity AS (
    SELECT
        s.request_id, s.ts, s.ts_end, s.account_id, s.model,
        coalesce(l.engine_prompt_tokens, s.prompt_tokens) AS prompt_tokens,
        s.prompt_tokens AS gateway_prompt_tokens, l.engine_prompt_tokens,
        s.completion_tokens, s.status, s.prefill_node, s.decode_node,
        c.tokens AS capacity,
        coalesce(c.reject_from, c.tokens + 1) AS over_from,
        x.reason AS exclusion_reason,
        coalesce(s.status, $default_status) IN (SELECT status FROM case_success_status)
            AS delivered
    FROM scoped AS s
    LEFT JOIN first_match AS f
      ON f.prefill_node IS NOT DISTINCT FROM s.prefill_node
     AND f.model = s.model
     AND s.ts >= f.seg_start
     AND (f.seg_end IS NULL OR s.ts < f.seg_end)
    LEFT JOIN case_capacity AS c ON c.ordinal = f.ordinal
    LEFT JOIN case_exclusions AS x ON x.account_id = s.account_id
    LEFT JOIN engine_lengths AS l ON l.request_id = s.request_id
)
SELECT
    request_id, ts, ts_end, account_id, model, prompt_tokens, completion_tokens, status,
    prefill_node, decode_node,
    CAST(capacity AS BIGINT) AS capacity,
    CASE
        WHEN prompt_tokens > $context_window THEN 'over_context'
        WHEN capacity IS NULL THEN 'unknown_capacity'
        WHEN prompt_tokens < over_from THEN 'fits'
        WHEN NOT delivered THEN 'over_capacity_failed'
        WHEN exclusion_reason IS NOT NULL THEN 'excluded'
        ELSE 'exposed'
    END AS band,
    exclusion_reason,
    CAST(over_from AS BIGINT) AS over_from,
    gateway_prompt_tokens,
    CAST(engine_prompt_tokens AS BIGINT) AS engine_prompt_tokens
FROM with_capacity
