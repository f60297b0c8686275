-- Category status_unknown (direction min): exposed responses whose success status was
-- assumed, their source mapping no status (`range_status_unmapped`: the inputs whose
-- mapping leaves status unmapped, so ingest gave every record the default).
SELECT
    'status_unknown' AS category,
    'min' AS direction,
    b.request_id,
    CAST(NULL AS VARCHAR) AS source,
    CAST(NULL AS BIGINT) AS row,
    CAST(NULL AS BIGINT) AS bootstrap_room
FROM bands AS b
JOIN requests AS r ON r.request_id = b.request_id
WHERE b.band = 'exposed'
  AND r.source IN (SELECT source FROM range_status_unmapped)
