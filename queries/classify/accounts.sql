-- Per-account counts for usage classification (rows of `bands` of accounts not excluded):
--   exposed        band 'exposed'
--   baseline       normal long-context usage: band 'fits', prompt >= $min_prompt, served while
--                  the capacity in force was below $context_window (exposure was possible)
--   over_capacity  prompts over the capacity in force that got in (exposed or failed)
--   near_capacity  of those, prompts at most $near_margin (a fraction) above the capacity
--   max_burst      most over-capacity prompts in any closed $burst_minutes window
-- (only the rows some count looks at: an account with none of them is left out anyway)
WITH analysed AS (
    SELECT account_id, request_id, ts, prompt_tokens, capacity, band
    FROM bands
    WHERE exclusion_reason IS NULL
      AND (
          band IN ('exposed', 'over_capacity_failed')
          OR (band = 'fits' AND prompt_tokens >= $min_prompt AND capacity < $context_window)
      )
),
over_rows AS (
    SELECT
        account_id,
        prompt_tokens,
        capacity,
        count(*) OVER (
            PARTITION BY account_id ORDER BY ts
            RANGE BETWEEN CURRENT ROW AND to_minutes($burst_minutes) FOLLOWING
        ) AS in_window
    FROM analysed
    WHERE band IN ('exposed', 'over_capacity_failed')
),
over_acc AS (
    SELECT
        account_id,
        count(*) AS over_capacity,
        count(*) FILTER (WHERE prompt_tokens <= capacity * (1 + $near_margin)) AS near_capacity,
        max(in_window) AS max_burst
    FROM over_rows
    GROUP BY account_id
),
base_acc AS (
    SELECT
        account_id,
        count(*) FILTER (WHERE band = 'exposed') AS exposed,
        count(*) FILTER (
            WHERE band = 'fits'
              AND prompt_tokens >= $min_prompt
              AND capacity < $context_window
        ) AS baseline
    FROM analysed
    GROUP BY account_id
)
SELECT
    b.account_id,
    b.exposed,
    b.baseline,
    coalesce(o.over_capacity, 0) AS over_capacity,
    coalesce(o.near_capacity, 0) AS near_capacity,
    coalesce(o.max_burst, 0) AS max_burst
FROM base_acc AS b
LEFT JOIN over_acc AS o USING (account_id)
WHERE b.exposed > 0 OR b.baseline > 0 OR coalesce(o.over_capacity, 0) > 0
ORDER BY b.account_id
