-- Category status_unknown: over-capacity requests whose status the logs do not record
-- (status NULL: missing, null or "" in a source that maps status, or a source that maps
-- none). The bands read it as the default (200): an exposed one may not have been delivered
-- (direction min); one the default puts in over_capacity_failed (success_status without 200),
-- of an account not excluded, may have been (direction max).
SELECT
    'status_unknown' AS category,
    CASE WHEN band = 'exposed' THEN 'min' ELSE 'max' END AS direction,
    request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM bands
WHERE status IS NULL
  AND (band = 'exposed' OR (band = 'over_capacity_failed' AND exclusion_reason IS NULL))
