-- Load the records of one input (its path bound as source) whose outcome is `load`.
INSERT INTO requests
SELECT
    request_id, ts, account_id, model, prompt_tokens, completion_tokens, status,
    prefill_node, decode_node, ts_end, $source, source_row, extra
FROM _ing_out
WHERE outcome = 'load'
