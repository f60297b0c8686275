-- Near-simultaneous prompts of near-identical length, per account not excluded (rows of
-- `bands`: the case's models in the window). An account's requests in order (ts, then
-- request_id); a request is an echo when it and the one before it of the same account were
-- both delivered (a success status, the default where none is logged: a retry after an
-- error is not an echo), at most $echo_seconds apart, with prompts at most $echo_tokens
-- tokens apart. (The gap is compared as `prev_ts >= ts - interval`: subtracting two times
-- makes an interval per row, whose comparison costs several times the rest of the query.)
--   requests       the account's requests in scope
--   length_echoes  of them, echoes
WITH stream AS (
    SELECT
        account_id,
        request_id,
        ts,
        prompt_tokens,
        coalesce(status, $default_status) IN (SELECT status FROM case_success_status)
            AS delivered
    FROM bands
    WHERE exclusion_reason IS NULL
),
lagged AS (
    SELECT
        *,
        lag(ts) OVER w AS prev_ts,
        lag(prompt_tokens) OVER w AS prev_prompt,
        lag(delivered) OVER w AS prev_delivered
    FROM stream
    WINDOW w AS (PARTITION BY account_id ORDER BY ts, request_id)
)
SELECT
    account_id,
    count(*) AS requests,
    count(*) FILTER (
        WHERE delivered
          AND prev_delivered
          AND prev_ts >= ts - to_seconds($echo_seconds)
          AND abs(prompt_tokens - prev_prompt) <= $echo_tokens
    ) AS length_echoes
FROM lagged
GROUP BY account_id
ORDER BY account_id
