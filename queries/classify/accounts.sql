-- Per-account figures for usage classification (rows of `bands` of accounts not excluded).
-- An account's long-context stream: its exposed and failed over-capacity prompts plus its
-- baseline of normal long-context usage (band 'fits', prompt >= $min_prompt, served while the
-- capacity in force refused prompts the context window allows (over_from <= $context_window),
-- i.e. while exposure was possible). A closed
-- $burst_minutes window starts at each request of the stream.
--   exposed        band 'exposed'
--   baseline       the baseline requests
--   over_capacity  prompts over the capacity in force that got in (exposed or failed)
--   near_capacity  of those, prompts at most $near_margin (a fraction) above the capacity
--   max_burst      most over-capacity prompts in a window starting at one of them
--   windows        requests of the stream (one window each)
--   widest         most requests in one window
--   pairs          the distinct (requests, over_capacity) of windows with 2 or more
--                  over-capacity prompts, for the burst test
WITH stream AS (
    SELECT
        account_id,
        ts,
        prompt_tokens,
        capacity,
        over_from,
        band,
        (band IN ('exposed', 'over_capacity_failed'))::INTEGER AS is_over
    FROM bands
    WHERE exclusion_reason IS NULL
      AND (
          band IN ('exposed', 'over_capacity_failed')
          OR (band = 'fits' AND prompt_tokens >= $min_prompt AND over_from <= $context_window)
      )
),
windows AS (
    SELECT
        *,
        count(*) OVER w AS requests,
        sum(is_over) OVER w AS over_in_window
    FROM stream
    WINDOW w AS (
        PARTITION BY account_id ORDER BY ts
        RANGE BETWEEN CURRENT ROW AND to_minutes($burst_minutes) FOLLOWING
    )
),
per_account AS (
    SELECT
        account_id,
        count(*) FILTER (WHERE band = 'exposed') AS exposed,
        count(*) FILTER (
            WHERE band = 'fits'
              AND prompt_tokens >= $min_prompt
              AND over_from <= $context_window
        ) AS baseline,
        count(*) FILTER (WHERE is_over = 1) AS over_capacity,
        count(*) FILTER (
            WHERE is_over = 1 AND prompt_tokens <= capacity * (1 + $near_margin)
        ) AS near_capacity,
        coalesce(max(over_in_window) FILTER (WHERE is_over = 1), 0)::BIGINT AS max_burst,
        count(*) AS windows,
        max(requests) AS widest
    FROM windows
    GROUP BY account_id
),
pairs AS (
    SELECT
        account_id,
        list(
            struct_pack(requests := requests, over_capacity := over_capacity)
            ORDER BY requests, over_capacity
        ) AS pairs
    FROM (
        SELECT DISTINCT account_id, requests, over_in_window::BIGINT AS over_capacity
        FROM windows
        WHERE over_in_window >= 2
    )
    GROUP BY account_id
)
SELECT
    a.account_id,
    a.exposed,
    a.baseline,
    a.over_capacity,
    a.near_capacity,
    a.max_burst,
    a.windows,
    a.widest,
    p.pairs
FROM per_account AS a
LEFT JOIN pairs AS p USING (account_id)
WHERE a.exposed > 0 OR a.baseline > 0 OR a.over_capacity > 0
ORDER BY a.account_id
