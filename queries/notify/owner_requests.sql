-- The requests at risk of every data-owner account, for its notice: the same rows of
-- `data_owners` that data_owners.csv counts, one per owner request, with its arrival time
-- (from `bands`, NULL if absent), its end time and the exposed responses that could have read
-- it; sorted by account, then end time and request id.
WITH per_request AS (
    SELECT
        owner_account_id AS account_id,
        owner_request_id AS request_id,
        min(owner_end_ts) AS end_ts,
        count(DISTINCT exposed_request_id) AS exposures
    FROM data_owners
    GROUP BY owner_account_id, owner_request_id
)
SELECT
    p.account_id,
    p.request_id,
    regexp_replace(strftime(timezone('UTC', b.ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS at,
    regexp_replace(strftime(timezone('UTC', p.end_ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS ended_at,
    p.exposures
FROM per_request AS p
LEFT JOIN bands AS b ON b.request_id = p.request_id
ORDER BY p.account_id, p.end_ts, p.request_id
