-- One row per request of the case's models with ts in [window_start, window_end), with the
-- prefill capacity in force (`case_requests_in_force`: requests_in_force.sql) and its band
-- (docs/decisions.md "Bands"). over_from is the smallest prompt over that capacity: the
-- entry's reject_from (the engine's admission limit), else tokens + 1; a prompt fits when
-- prompt_tokens < over_from. prompt_tokens is the length that decides: the engine's own input
-- length where its logs give one (`engine_lengths`, also in engine_prompt_tokens), else the
-- gateway's (gateway_prompt_tokens, always the record's).
WITH scoped AS (
    SELECT r.*
    FROM case_requests_in_force AS r
    WHERE r.model IN (SELECT model FROM case_models)
      AND r.ts >= $window_start
      AND r.ts < $window_end
),
with_capacity AS (
    SELECT
        s.request_id, s.ts, s.ts_end, s.account_id, s.model,
        coalesce(l.engine_prompt_tokens, s.prompt_tokens) AS prompt_tokens,
        s.prompt_tokens AS gateway_prompt_tokens, l.engine_prompt_tokens,
        s.completion_tokens, s.status, s.prefill_node, s.decode_node,
        s.capacity,
        s.over_from,
        x.reason AS exclusion_reason,
        coalesce(s.status, $default_status) IN (SELECT status FROM case_success_status)
            AS delivered
    FROM scoped AS s
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
