-- Outcome counts of one input's records that are not loaded (ingest_out).
SELECT
    count(*) FILTER (WHERE outcome = 'duplicate') AS duplicates,
    count(*) FILTER (WHERE outcome IN ('quarantine', 'conflict', 'unicode')) AS quarantined
FROM _ing_out
