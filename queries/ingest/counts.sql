-- Outcome counts of one input: rows_read = rows_loaded + duplicates + quarantined.
SELECT
    count(*) AS rows_read,
    count(*) FILTER (WHERE outcome = 'load') AS rows_loaded,
    count(*) FILTER (WHERE outcome = 'duplicate') AS duplicates,
    count(*) FILTER (WHERE outcome IN ('quarantine', 'conflict')) AS quarantined
FROM _ing_out
