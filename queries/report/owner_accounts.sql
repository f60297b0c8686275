-- Per data-owner account: its requests possibly read by another account's exposed response.
SELECT owner_account_id AS account_id,
       count(DISTINCT owner_request_id) AS requests_at_risk,
       count(DISTINCT exposed_request_id) AS exposures,
       strftime(min(owner_end_ts) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS first_at,
       strftime(max(owner_end_ts) AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS last_at
FROM data_owners
GROUP BY owner_account_id
ORDER BY requests_at_risk DESC, account_id
