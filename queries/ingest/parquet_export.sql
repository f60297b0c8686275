-- The canonical requests with their UTC day, for the partitioned Parquet export.
SELECT *, strftime(ts, '%Y-%m-%d') AS day FROM requests ORDER BY ts, request_id
