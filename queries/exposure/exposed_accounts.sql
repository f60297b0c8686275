-- The accounts counted as exposed, with their exposed responses (to find the ids among them
-- that look like an excluded id).
SELECT account_id, count(*) AS responses
FROM bands
WHERE band = 'exposed'
GROUP BY account_id
ORDER BY account_id
