-- Per excluded account: its reason, requests that met the exposure condition (band
-- 'excluded') and all its requests in the window.
SELECT exclusion_reason AS reason,
       account_id,
       count(*) FILTER (WHERE band = 'excluded') AS excluded_requests,
       count(*) AS requests_in_window
FROM bands
WHERE exclusion_reason IS NOT NULL
GROUP BY exclusion_reason, account_id
ORDER BY reason, account_id
