-- One page of notices' requests at risk (`notify_owner_requests`), by account, end time,
-- request id.
SELECT account_id, request_id, ts, end_ts, exposures
FROM notify_owner_requests
WHERE page = $page
ORDER BY account_id, end_ts, request_id
