-- Exposure count (requests in band `exposed`) and affected accounts (their distinct accounts).
SELECT count(*) AS exposure_count, count(DISTINCT account_id) AS affected_accounts
FROM bands
WHERE band = 'exposed'
