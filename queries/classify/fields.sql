-- The probing signatures read from fields a mapping keeps in `extra`, per account not
-- excluded (rows of `bands`: the case's models in the window, with their `requests.extra`):
--   requests         the account's requests in scope
--   with_max_tokens  of them, with a numeric extra.max_tokens (the completion limit asked)
--   tiny_max_tokens  of those, max_tokens <= $tiny_max_tokens
--   with_prefix      requests with a prefix fingerprint: extra.prefix_hash, else the first
--                    two block hashes of extra.hash_ids (a list, as the Mooncake traces
--                    log them; a request of fewer blocks has none)
--   prefix_matches   of those, requests whose fingerprint another account (any account in
--                    scope, excluded ones too) had sent strictly earlier
--   prefix_accounts  the distinct accounts that first sent the fingerprints matched
WITH scoped AS (
    SELECT
        b.account_id,
        b.ts,
        b.exclusion_reason,
        try_cast(r.extra ->> 'max_tokens' AS DOUBLE) AS max_tokens,
        CASE
            WHEN (r.extra ->> 'prefix_hash') IS NOT NULL
                THEN 'h:' || (r.extra ->> 'prefix_hash')
            WHEN (r.extra ->> '$.hash_ids[1]') IS NOT NULL
                THEN 'b:' || (r.extra ->> '$.hash_ids[0]') || ',' || (r.extra ->> '$.hash_ids[1]')
        END AS prefix
    FROM bands AS b
    JOIN case_requests AS r ON r.request_id = b.request_id
),
-- each account's first use of each fingerprint, and per fingerprint the two accounts that
-- used it first: a request of account a matches when an account other than a used its
-- fingerprint before it (the first such account is the first user, or the second when a is)
firsts AS (
    SELECT prefix, account_id, min(ts) AS first_ts
    FROM scoped
    WHERE prefix IS NOT NULL
    GROUP BY prefix, account_id
),
ranked AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY prefix ORDER BY first_ts, account_id) AS position
    FROM firsts
),
leaders AS (
    SELECT
        prefix,
        max(account_id) FILTER (WHERE position = 1) AS first_account,
        max(first_ts) FILTER (WHERE position = 1) AS first_ts,
        max(account_id) FILTER (WHERE position = 2) AS second_account,
        max(first_ts) FILTER (WHERE position = 2) AS second_ts
    FROM ranked
    WHERE position <= 2
    GROUP BY prefix
),
matched AS (
    SELECT
        s.account_id,
        s.max_tokens,
        s.prefix,
        CASE
            WHEN s.prefix IS NULL THEN NULL
            WHEN l.first_account <> s.account_id AND l.first_ts < s.ts THEN l.first_account
            WHEN l.first_account = s.account_id AND l.second_ts < s.ts THEN l.second_account
        END AS earlier_account
    FROM scoped AS s
    LEFT JOIN leaders AS l ON l.prefix = s.prefix
    WHERE s.exclusion_reason IS NULL
)
SELECT
    account_id,
    count(*) AS requests,
    count(max_tokens) AS with_max_tokens,
    count(*) FILTER (WHERE max_tokens <= $tiny_max_tokens) AS tiny_max_tokens,
    count(prefix) AS with_prefix,
    count(earlier_account) AS prefix_matches,
    count(DISTINCT earlier_account) AS prefix_accounts
FROM matched
GROUP BY account_id
ORDER BY account_id
