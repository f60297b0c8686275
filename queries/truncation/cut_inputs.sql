-- The request-log inputs whose gzip or zstd stream broke off (ingest's note on such an input
-- starts `truncated gzip stream` or `truncated zstd stream`, as an older version's did too):
-- path and the stream's kind.
SELECT
    path,
    CASE WHEN note LIKE 'truncated gzip stream%' THEN 'gzip' ELSE 'zstd' END AS stream
FROM inputs
WHERE note LIKE 'truncated gzip stream%' OR note LIKE 'truncated zstd stream%'
ORDER BY path
