-- One page of notices' requests at risk (`notify_owner_requests`), by account, end time,
-- request id; the arrival and end times as the notices write them (worded here, a page at a
-- time).
SELECT
    account_id,
    request_id,
    regexp_replace(strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS "at",
    regexp_replace(strftime(timezone('UTC', end_ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS ended_at,
    exposures
FROM notify_owner_requests
WHERE page = $page
ORDER BY account_id, end_ts, request_id
