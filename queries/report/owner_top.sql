-- The $rows data-owner accounts with most requests at risk (ties by id), each with the
-- exposed responses that could have read them and the first and last end time of those
-- requests; on every row, the totals: accounts, requests at risk (each owner request is one
-- account's: the sum is the distinct count), exposed responses with an owner and excluded
-- accounts' responses (band excluded) with an owner. The
-- distinct requests are counted once per account; the details only for the accounts shown.
WITH ranked AS (
    SELECT account_id,
           requests_at_risk,
           count(*) OVER () AS accounts,
           sum(requests_at_risk) OVER () AS requests,
           row_number() OVER (ORDER BY requests_at_risk DESC, account_id) AS place
    FROM (
        SELECT owner_account_id AS account_id,
               count(DISTINCT owner_request_id) AS requests_at_risk
        FROM data_owners
        GROUP BY owner_account_id
    ) AS per_account
),
shown AS (
    SELECT * FROM ranked WHERE place <= $rows
)
SELECT shown.account_id,
       shown.requests_at_risk,
       count(DISTINCT d.exposed_request_id) AS exposures,
       strftime(min(d.owner_end_ts) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS first_at,
       strftime(max(d.owner_end_ts) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS last_at,
       shown.accounts,
       CAST(shown.requests AS BIGINT) AS requests,
       (SELECT count(DISTINCT exposed_request_id) FROM data_owners
        WHERE exposed_band = 'exposed') AS all_exposures,
       (SELECT count(DISTINCT exposed_request_id) FROM data_owners
        WHERE exposed_band = 'excluded') AS all_excluded,
       shown.place
FROM shown
JOIN data_owners AS d ON d.owner_account_id = shown.account_id
GROUP BY shown.account_id, shown.requests_at_risk, shown.accounts, shown.requests, shown.place
ORDER BY shown.place
