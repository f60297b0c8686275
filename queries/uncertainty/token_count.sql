-- Category token_count (candidates): requests with a prefill capacity in force whose
-- exposure would differ for some prompt length p' in [p - $tolerance, p + $tolerance]
-- (direction min for the exposed, max for the others). Exposed at p': over_from <= p' <=
-- context window (over_from: the entry's reject_from, else capacity + 1), with a success
-- status and an account not excluded (which p' does not change). An exposed request differs
-- when p - tolerance < over_from or p + tolerance > the context window; another one when
-- [p - tolerance, p + tolerance] meets [over_from, context window]. A request whose own input
-- length the engine logs give (engine_prompt_tokens) is not uncertain: that length decides.
SELECT
    'token_count' AS category,
    CASE WHEN band = 'exposed' THEN 'min' ELSE 'max' END AS direction,
    request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM bands
WHERE capacity IS NOT NULL
  AND engine_prompt_tokens IS NULL
  AND (
      (
          band = 'exposed'
          AND (prompt_tokens - $tolerance < over_from OR prompt_tokens + $tolerance > $context_window)
      )
      OR (
          band IN ('fits', 'over_context')
          AND exclusion_reason IS NULL
          AND coalesce(status, $default_status) IN (SELECT status FROM case_success_status)
          AND over_from <= $context_window
          AND prompt_tokens - $tolerance <= $context_window
          AND prompt_tokens + $tolerance >= over_from
      )
  )
