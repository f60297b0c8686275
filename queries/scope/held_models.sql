-- Every model of the case's requests (any time) with its count and first and last time:
-- what a case model with no request in the window could have meant.
SELECT model, count(*) AS requests, min(ts) AS first_ts, max(ts) AS last_ts
FROM case_requests
GROUP BY model
ORDER BY model
