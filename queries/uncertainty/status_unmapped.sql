-- Category status_unknown, for a case database ingested before a missing status stayed NULL:
-- over-capacity requests (as in status_unknown.sql) holding the default status ingest gave
-- every record of an input whose mapping leaves status unmapped (`range_status_unmapped`).
SELECT
    'status_unknown' AS category,
    CASE WHEN b.band = 'exposed' THEN 'min' ELSE 'max' END AS direction,
    b.request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM bands AS b
JOIN case_requests AS r ON r.request_id = b.request_id
WHERE b.status IS NOT NULL
  AND (b.band = 'exposed' OR (b.band = 'over_capacity_failed' AND b.exclusion_reason IS NULL))
  AND r.source IN (SELECT source FROM range_status_unmapped)
