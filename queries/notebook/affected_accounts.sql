-- Affected accounts (band exposed), busiest first: exposed responses, first and last time.
SELECT account_id,
       count(*) AS exposed,
       min(ts) AS first_exposed_at,
       max(ts) AS last_exposed_at
FROM bands
WHERE band = 'exposed'
GROUP BY account_id
ORDER BY exposed DESC, account_id
