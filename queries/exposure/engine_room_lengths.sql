-- The engine's input lengths per request of the case (`case_requests`: every model and time,
-- the inputs the case does not name left out) whose bootstrap_room (`extra.bootstrap_room`)
-- the case's engine logs name: one row per request and distinct length the room's lines give
-- (a decode leg's input_len, a prefill leg's other than the one-token placeholder of a
-- rejected prefill, the tokens a prefill abort names). `decides`: the room identifies this
-- request and its length, i.e. exactly one of the case's requests carries the room and its
-- lines agree on one length (docs/evidence.md "The engine's own input length decides"); that
-- length then decides the request's band (engine_lengths.sql). `requests`: how many of the
-- case's requests carry the room; `lengths`: how many distinct lengths its lines give.
WITH lengths AS (
    SELECT bootstrap_room AS room, input_len AS tokens
    FROM case_engine_requests
    WHERE bootstrap_room IS NOT NULL
      AND input_len IS NOT NULL
      AND (role = 'decode' OR input_len > 1)
    UNION
    SELECT bootstrap_room AS room, requested_tokens AS tokens
    FROM case_engine_aborts
    WHERE bootstrap_room IS NOT NULL AND requested_tokens IS NOT NULL
),
per_room AS (
    SELECT room, count(*) AS lengths FROM lengths GROUP BY room
),
carried AS (
    SELECT r.request_id, p.room, p.lengths
    FROM case_requests AS r
    JOIN per_room AS p ON p.room = try_cast(r.extra ->> 'bootstrap_room' AS BIGINT)
),
sharing AS (
    SELECT room, count(*) AS requests FROM carried GROUP BY room
)
SELECT
    c.request_id,
    CAST(c.room AS BIGINT) AS bootstrap_room,
    CAST(l.tokens AS BIGINT) AS tokens,
    CAST(s.requests AS BIGINT) AS requests,
    CAST(c.lengths AS BIGINT) AS lengths,
    s.requests = 1 AND c.lengths = 1 AS decides
FROM carried AS c
JOIN sharing AS s ON s.room = c.room
JOIN lengths AS l ON l.room = c.room
