-- The token_count candidates (`range_token_candidates`) whose own input length the engine
-- logs give, found by the gateway record's bootstrap_room: a decode leg's input_len, a
-- prefill leg's input_len other than the one-token placeholder of a rejected prefill, or the
-- tokens a prefill abort names. That length decides: the request is not uncertain.
WITH lengths AS (
    SELECT bootstrap_room AS room
    FROM engine_requests
    WHERE bootstrap_room IS NOT NULL
      AND input_len IS NOT NULL
      AND (role = 'decode' OR input_len > 1)
    UNION
    SELECT bootstrap_room AS room
    FROM engine_aborts
    WHERE bootstrap_room IS NOT NULL AND requested_tokens IS NOT NULL
)
SELECT DISTINCT r.request_id
FROM requests AS r
WHERE r.request_id IN (SELECT request_id FROM range_token_candidates)
  AND try_cast(r.extra ->> 'bootstrap_room' AS BIGINT) IN (SELECT room FROM lengths)
