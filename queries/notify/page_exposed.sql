-- One page of notices' exposed responses (`notify_exposed`), by account, time, request id;
-- the arrival time as the notices write it (worded here, a page at a time).
SELECT
    account_id,
    request_id,
    replace(strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%f'), '.000000', '')
        || 'Z' AS "at",
    prompt_tokens,
    capacity,
    completion_tokens
FROM notify_exposed
WHERE page = $page
ORDER BY account_id, ts, request_id
