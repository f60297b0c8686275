-- Windows for the burst test, per account not excluded. Its long-context stream is the
-- baseline rows (see classify_accounts.sql) plus its over-capacity prompts (exposed or
-- failed); a closed $burst_minutes window starts at each of them. Per account: windows
-- (how many), widest (most long-context requests in one window), and the distinct
-- (requests, over_capacity) pairs of windows holding 2 or more over-capacity prompts.
WITH stream AS (
    SELECT
        account_id,
        ts,
        (band IN ('exposed', 'over_capacity_failed'))::INTEGER AS is_over
    FROM bands
    WHERE exclusion_reason IS NULL
      AND (
          band IN ('exposed', 'over_capacity_failed')
          OR (band = 'fits' AND prompt_tokens >= $min_prompt AND capacity < $context_window)
      )
),
windows AS (
    SELECT
        account_id,
        count(*) OVER w AS requests,
        sum(is_over) OVER w AS over_capacity
    FROM stream
    WINDOW w AS (
        PARTITION BY account_id ORDER BY ts
        RANGE BETWEEN CURRENT ROW AND to_minutes($burst_minutes) FOLLOWING
    )
),
pairs AS (
    SELECT
        account_id,
        list(
            struct_pack(requests := requests, over_capacity := over_capacity)
            ORDER BY requests, over_capacity
        ) AS pairs
    FROM (
        SELECT DISTINCT account_id, requests, over_capacity
        FROM windows
        WHERE over_capacity >= 2
    )
    GROUP BY account_id
),
totals AS (
    SELECT account_id, count(*) AS windows, sum(is_over)::BIGINT AS over_capacity
    FROM stream
    GROUP BY account_id
),
widest AS (
    SELECT account_id, max(requests) AS widest
    FROM windows
    GROUP BY account_id
)
SELECT t.account_id, t.windows, t.over_capacity, w.widest, p.pairs
FROM totals AS t
JOIN widest AS w USING (account_id)
LEFT JOIN pairs AS p USING (account_id)
ORDER BY t.account_id
