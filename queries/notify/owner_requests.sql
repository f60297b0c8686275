-- The requests at risk of every data-owner account, for the notices, with the page of
-- notices their account is on (`notify_pages`): the rows of `data_owners` that
-- data_owners.csv counts, one per owner request, with its arrival time (from `bands`, NULL
-- if absent), its end time and the exposed responses that could have read it.
WITH pairs AS (
    -- each (owner request, exposed response) once: count(DISTINCT ...) as two GROUP BYs,
    -- which DuckDB runs in half the time at 10M pairs
    SELECT
        owner_account_id,
        owner_request_id,
        exposed_request_id,
        min(owner_end_ts) AS end_ts
    FROM data_owners
    GROUP BY owner_account_id, owner_request_id, exposed_request_id
),
per_request AS (
    SELECT
        owner_account_id AS account_id,
        owner_request_id AS request_id,
        min(end_ts) AS end_ts,
        count(exposed_request_id) AS exposures
    FROM pairs
    GROUP BY owner_account_id, owner_request_id
)
SELECT
    r.account_id,
    p.page,
    r.request_id,
    r.end_ts,
    b.ts,
    r.exposures
FROM per_request AS r
JOIN notify_pages AS p ON p.account_id = r.account_id
LEFT JOIN bands AS b ON b.request_id = r.request_id
-- stored in page order: a page's rows are then a few blocks (`page_owner_requests`, which
-- words the times, a page at a time)
ORDER BY p.page
