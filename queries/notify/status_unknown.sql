-- The exposed responses whose status the analysis found unknown (exposure range category
-- status_unknown: no status, or, in a database ingested before a missing status stayed
-- NULL, the default given to a source that maps none): their delivery is not on record.
SELECT DISTINCT request_id
FROM exposure_range_requests
WHERE category = 'status_unknown' AND request_id IS NOT NULL
ORDER BY request_id
