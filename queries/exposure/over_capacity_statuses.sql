-- The statuses of the over-capacity requests the bands count as not delivered (band
-- over_capacity_failed: status not in success_status), with their counts; a request without
-- a status (read as the default) under NULL.
SELECT status, count(*) AS requests
FROM bands
WHERE band = 'over_capacity_failed'
GROUP BY status
ORDER BY status NULLS LAST
