-- The requests and quarantined records that widen the exposure range
-- (`exposure_range_requests`), each with the account it belongs to where one is readable:
-- from `requests` for a request id, from the quarantined record's readable values
-- (`notify_quarantine`) otherwise; with its arrival time and prompt size where known. A key
-- names it once: `r:` and the request id, or `q:`, the source and the row. Rows without a
-- readable account (a record nothing of which could be read, an engine-log signature with no
-- gateway record) name no account: they are in no list.
SELECT
    e.category,
    e.direction,
    e.request_id,
    e.source,
    e.row,
    CASE WHEN e.request_id IS NOT NULL THEN 'r:' || e.request_id
         ELSE 'q:' || e.source || ':' || CAST(e.row AS VARCHAR) END AS range_key,
    coalesce(r.account_id, q.account_id) AS account_id,
    regexp_replace(strftime(timezone('UTC', coalesce(r.ts, q.ts)), '%Y-%m-%dT%H:%M:%S.%f'),
                   '\.000000$', '') || 'Z' AS at,
    coalesce(r.prompt_tokens, q.prompt_tokens) AS prompt_tokens
FROM exposure_range_requests AS e
LEFT JOIN requests AS r ON r.request_id = e.request_id
LEFT JOIN notify_quarantine AS q
    ON e.request_id IS NULL AND q.source = e.source AND q.row = e.row
WHERE e.request_id IS NOT NULL OR e.row IS NOT NULL
ORDER BY range_key, category, direction
