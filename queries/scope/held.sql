-- What the logs hold, per model: requests, first and last time (any time), busiest first.
SELECT model, count(*) AS requests, min(ts) AS first_ts, max(ts) AS last_ts
FROM case_requests
GROUP BY model
ORDER BY requests DESC, model
