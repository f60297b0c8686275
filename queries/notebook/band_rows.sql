-- The notebook's rows of one band: every request of `bands` in band $band, oldest first.
SELECT request_id, ts, ts_end, account_id, model, prompt_tokens, completion_tokens, status,
       prefill_node, decode_node, capacity, band, exclusion_reason
FROM bands
WHERE band = $band
ORDER BY bands.ts, request_id
