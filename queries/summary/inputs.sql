-- The inputs table for summary.json, sorted by path.
SELECT path, sha256, bytes, rows_read, rows_loaded, duplicates, quarantined, format, note
FROM inputs
ORDER BY path, sha256
