-- The exposed responses of every affected account, for its notice: the same rows of `bands`
-- that recipients.csv counts, sorted by account, then time and request id. status_recorded:
-- the log gives the response's status (it is not in the exposure range's status_unknown:
-- no status, or a source that maps none), so its delivery is on record.
SELECT
    b.account_id,
    b.request_id,
    regexp_replace(strftime(timezone('UTC', b.ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS at,
    b.prompt_tokens,
    b.capacity,
    b.completion_tokens,
    u.request_id IS NULL AS status_recorded
FROM bands AS b
LEFT JOIN (
    SELECT DISTINCT request_id FROM exposure_range_requests
    WHERE category = 'status_unknown' AND request_id IS NOT NULL
) AS u ON u.request_id = b.request_id
WHERE b.band = 'exposed'
ORDER BY b.account_id, b.ts, b.request_id
