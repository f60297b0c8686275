-- Category engine_length (candidates): requests in scope whose bootstrap_room the engine logs
-- give lengths for that decide nothing (`engine_room_lengths`: several of the case's requests
-- carry the room, or its lines disagree), so the gateway's length stands, and whose exposure
-- would differ at one of the room's lengths L (direction min for the exposed, max for the
-- others). Exposed at L: over_from <= L <= the context window, with a capacity in force, a
-- success status and an account not excluded (which L does not change).
SELECT DISTINCT
    'engine_length' AS category,
    CASE WHEN b.band = 'exposed' THEN 'min' ELSE 'max' END AS direction,
    b.request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM bands AS b
JOIN engine_room_lengths AS l ON l.request_id = b.request_id
WHERE NOT l.decides
  AND b.capacity IS NOT NULL
  AND (
      (b.band = 'exposed' AND (l.tokens < b.over_from OR l.tokens > $context_window))
      OR (
          b.band IN ('fits', 'over_context')
          AND b.exclusion_reason IS NULL
          AND coalesce(b.status, $default_status) IN (SELECT status FROM case_success_status)
          AND l.tokens >= b.over_from
          AND l.tokens <= $context_window
      )
  )
