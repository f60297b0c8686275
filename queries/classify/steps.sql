-- Prompt-size stepping around the capacity, per account not excluded. Only prompts within
-- $zone (a fraction) of the capacity in force are looked at; consecutive ones of an account
-- at most $session_minutes apart form a session; a run is a stretch of strictly increasing
-- sizes inside a session. Per account: the sizes of its sessions (for the bound) and its
-- longest run that crosses the capacity (some size fits, some is over: prompt >= over_from).
WITH zone AS (
    SELECT account_id, request_id, ts, prompt_tokens, capacity, over_from
    FROM bands
    WHERE exclusion_reason IS NULL
      AND capacity IS NOT NULL
      AND band IN ('fits', 'exposed', 'over_capacity_failed')
      AND prompt_tokens >= capacity * (1 - $zone)
      AND prompt_tokens <= capacity * (1 + $zone)
),
lagged AS (
    SELECT
        *,
        lag(ts) OVER w AS prev_ts,
        lag(prompt_tokens) OVER w AS prev_prompt
    FROM zone
    WINDOW w AS (PARTITION BY account_id ORDER BY ts, request_id)
),
flagged AS (
    SELECT
        *,
        (prev_ts IS NULL OR ts - prev_ts > to_minutes($session_minutes)) AS new_session
    FROM lagged
),
numbered AS (
    SELECT
        *,
        sum(new_session::INTEGER) OVER w AS session,
        sum((new_session OR prompt_tokens <= prev_prompt)::INTEGER) OVER w AS run
    FROM flagged
    WINDOW w AS (PARTITION BY account_id ORDER BY ts, request_id ROWS UNBOUNDED PRECEDING)
),
sessions AS (
    SELECT account_id, list(n ORDER BY session) AS session_sizes, sum(n) AS zone_requests
    FROM (SELECT account_id, session, count(*) AS n FROM numbered GROUP BY ALL)
    GROUP BY account_id
),
runs AS (
    SELECT
        account_id,
        run,
        count(*) AS length,
        min(ts) AS run_start,
        max(ts) AS run_end,
        min(prompt_tokens) AS run_min,
        max(prompt_tokens) AS run_max
    FROM numbered
    GROUP BY account_id, run
    HAVING bool_or(prompt_tokens < over_from) AND bool_or(prompt_tokens >= over_from)
),
best AS (
    SELECT account_id, length, run_start, run_end, run_min, run_max
    FROM runs
    QUALIFY row_number() OVER (PARTITION BY account_id ORDER BY length DESC, run_start) = 1
)
SELECT
    s.account_id,
    s.zone_requests,
    s.session_sizes,
    coalesce(b.length, 0) AS longest_run,
    b.run_start,
    b.run_end,
    b.run_min,
    b.run_max
FROM sessions AS s
LEFT JOIN best AS b USING (account_id)
ORDER BY s.account_id
