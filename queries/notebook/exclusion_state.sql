-- How `bands` was computed for exclusions: each account that is listed in $accounts or carries
-- an exclusion reason, with the reason stored on its rows (NULL when exclusions were off).
SELECT account_id, max(exclusion_reason) AS reason
FROM bands
WHERE list_contains($accounts::VARCHAR[], account_id) OR exclusion_reason IS NOT NULL
GROUP BY account_id
ORDER BY account_id
