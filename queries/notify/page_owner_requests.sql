-- One page of notices' requests at risk (`notify_owner_requests`), by account, end time,
-- request id; the arrival and end times as the notices write them (worded here, a page at a
-- time; `replace` drops a zero fraction, the one `.` of the format, as the lists'
-- `regexp_replace` does, at a sixth of its cost).
SELECT
    account_id,
    request_id,
    replace(strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%f'), '.000000', '')
        || 'Z' AS "at",
    replace(strftime(timezone('UTC', end_ts), '%Y-%m-%dT%H:%M:%S.%f'), '.000000', '')
        || 'Z' AS ended_at,
    exposures
FROM notify_owner_requests
WHERE page = $page
ORDER BY account_id, end_ts, request_id
