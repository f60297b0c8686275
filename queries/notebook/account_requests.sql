-- One account's requests in the case window (rows of `bands`) with band and capacity in force.
SELECT request_id, ts, ts_end, account_id, model, prompt_tokens, completion_tokens, status,
       prefill_node, decode_node, capacity, band, exclusion_reason
FROM bands
WHERE account_id = $account_id
ORDER BY bands.ts, request_id
