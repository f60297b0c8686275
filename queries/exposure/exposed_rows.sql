-- exposed_requests.csv: every exposed request, times as ISO 8601 UTC with Z, sorted.
SELECT
    request_id,
    regexp_replace(strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%f'), '\.000000$', '')
        || 'Z' AS ts,
    account_id,
    model,
    prompt_tokens,
    capacity,
    prefill_node,
    decode_node,
    status
FROM bands
WHERE band = 'exposed'
ORDER BY bands.ts, request_id
