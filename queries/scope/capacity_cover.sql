-- How much of the scope (bands) a prefill [[capacity]] entry covers: the requests with one in
-- force, those in band unknown_capacity, and the first and last time of the requests.
SELECT
    count(capacity) AS covered,
    count(*) FILTER (WHERE band = 'unknown_capacity') AS unknown,
    min(ts) AS first_ts,
    max(ts) AS last_ts
FROM bands
