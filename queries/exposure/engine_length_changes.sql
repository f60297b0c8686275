-- The requests in scope whose engine input length (engine_prompt_tokens, which decides) is
-- not the gateway's prompt_tokens, with the band the gateway's length would have given
-- (bands.sql's rule on gateway_prompt_tokens), by request_id.
SELECT
    request_id,
    gateway_prompt_tokens,
    engine_prompt_tokens,
    band,
    CASE
        WHEN gateway_prompt_tokens > $context_window THEN 'over_context'
        WHEN capacity IS NULL THEN 'unknown_capacity'
        WHEN gateway_prompt_tokens < over_from THEN 'fits'
        WHEN coalesce(status, $default_status) NOT IN (SELECT status FROM case_success_status)
            THEN 'over_capacity_failed'
        WHEN exclusion_reason IS NOT NULL THEN 'excluded'
        ELSE 'exposed'
    END AS gateway_band
FROM bands
WHERE engine_prompt_tokens IS NOT NULL AND engine_prompt_tokens <> gateway_prompt_tokens
ORDER BY request_id
