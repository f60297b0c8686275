-- One page of notices' exposed responses (`notify_exposed`), by account, time, request id.
SELECT account_id, request_id, ts, prompt_tokens, capacity, completion_tokens
FROM notify_exposed
WHERE page = $page
ORDER BY account_id, ts, request_id
