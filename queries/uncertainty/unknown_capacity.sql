-- Category unknown_capacity (direction max): requests in band unknown_capacity (no
-- [[capacity]] entry in force for their prefill node at their time) answered with a success
-- status, of an account not excluded, whose prompt is above the smallest prefill capacity in
-- force at any time in the window (widened by the clock skew, less the token tolerance
-- unless the engine logs give the request's own input length).
-- The band already holds only prompts within the context window.
WITH floor_cap AS (
    -- the smallest prompt over a capacity: the entry's reject_from, else tokens + 1
    -- of the entries that hold for a model of the case
    SELECT min(coalesce(reject_from, tokens + 1)) AS over_from
    FROM case_capacity
    WHERE role = 'prefill' AND for_case AND start_ts < $hi AND (end_ts IS NULL OR end_ts > $lo)
)
SELECT
    'unknown_capacity' AS category,
    'max' AS direction,
    b.request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM bands AS b
CROSS JOIN floor_cap AS f
WHERE b.band = 'unknown_capacity'
  AND b.exclusion_reason IS NULL
  AND coalesce(b.status, $default_status) IN (SELECT status FROM case_success_status)
  AND (
      f.over_from IS NULL
      OR b.prompt_tokens
          >= f.over_from - CASE WHEN b.engine_prompt_tokens IS NULL THEN $tolerance ELSE 0 END
  )
