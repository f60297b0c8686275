-- The exposed responses of every affected account, for its notice: the same rows of `bands`
-- that recipients.csv counts, sorted by account, then time and request id. status_recorded:
-- the log gives the response's status, so its delivery is on record.
SELECT
    account_id,
    request_id,
    regexp_replace(strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS at,
    prompt_tokens,
    capacity,
    completion_tokens,
    status IS NOT NULL AS status_recorded
FROM bands
WHERE band = 'exposed'
ORDER BY account_id, bands.ts, request_id
