-- The engine's own input length of the case's requests (of its models) whose bootstrap_room
-- (`extra.bootstrap_room`) the case's engine logs name: a decode leg's input_len, a prefill
-- leg's other than the one-token placeholder of a rejected prefill, the tokens a prefill
-- abort names. That length decides the request's band (bands.sql); where the engine lines
-- of a room give different lengths, none is taken (the gateway's decides, with its
-- tolerance).
WITH lengths AS (
    SELECT bootstrap_room AS room, input_len AS tokens
    FROM case_engine_requests
    WHERE bootstrap_room IS NOT NULL
      AND input_len IS NOT NULL
      AND (role = 'decode' OR input_len > 1)
    UNION ALL
    SELECT bootstrap_room AS room, requested_tokens AS tokens
    FROM case_engine_aborts
    WHERE bootstrap_room IS NOT NULL AND requested_tokens IS NOT NULL
),
per_room AS (
    SELECT room, min(tokens) AS tokens
    FROM lengths
    GROUP BY room
    HAVING min(tokens) = max(tokens)
)
SELECT r.request_id, CAST(p.tokens AS BIGINT) AS engine_prompt_tokens
FROM case_requests AS r
JOIN per_room AS p ON p.room = try_cast(r.extra ->> 'bootstrap_room' AS BIGINT)
WHERE r.model IN (SELECT model FROM case_models)
