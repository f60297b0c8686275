-- The reason each typed record that failed a check (`_ing_typed`, failed not NULL) cannot
-- be loaded. Reasons name the field; the _why macros say what is wrong with a value that did
-- not convert.
SELECT
    source_row,
    raw,
    CASE failed
        WHEN 'record' THEN __err
        WHEN 'duplicate key' THEN 'duplicate JSON key ' || __dup
        WHEN 'sql' THEN 'sql of ' || __sqlerr || ' failed on this record'
        WHEN 'request_id long' THEN 'request_id longer than ' || $max_text_bytes || ' bytes'
        WHEN 'account_id long' THEN 'account_id longer than ' || $max_text_bytes || ' bytes'
        WHEN 'model long' THEN 'model longer than ' || $max_text_bytes || ' bytes'
        WHEN 'prefill_node long' THEN 'prefill_node longer than ' || $max_text_bytes || ' bytes'
        WHEN 'decode_node long' THEN 'decode_node longer than ' || $max_text_bytes || ' bytes'
        WHEN 'prompt_tokens implausible'
            THEN 'implausible token count prompt_tokens (' || $max_tokens_text || ' or more)'
        WHEN 'completion_tokens implausible'
            THEN 'implausible token count completion_tokens (' || $max_tokens_text || ' or more)'
        WHEN 'ts_end before ts' THEN 'ts_end before ts'
        WHEN 'request_id missing' THEN 'missing required field request_id'
        WHEN 'ts missing' THEN 'missing required field ts'
        WHEN 'account_id missing' THEN 'missing required field account_id'
        WHEN 'model missing' THEN 'missing required field model'
        WHEN 'prompt_tokens missing' THEN 'missing required field prompt_tokens'
        WHEN 'prompt_tokens' THEN _ing_int_why(v_prompt_tokens, 'token count prompt_tokens')
        WHEN 'prompt_tokens negative' THEN 'negative token count prompt_tokens'
        WHEN 'completion_tokens'
            THEN _ing_int_why(v_completion_tokens, 'token count completion_tokens')
        WHEN 'completion_tokens negative' THEN 'negative token count completion_tokens'
        WHEN 'ts' THEN _ing_time_n_why(n_ts, v_ts, $unit, $tz, 'ts')
        WHEN 'ts_end' THEN _ing_time_n_why(n_ts_end, v_ts_end, $unit, $tz, 'ts_end')
        WHEN 'status' THEN
            CASE
                WHEN n_status IS NULL AND _ing_int(v_status) IS NULL
                THEN _ing_int_why(v_status, 'status')
                ELSE 'out-of-range status'
            END
    END AS reason
FROM _ing_typed
WHERE failed IS NOT NULL
