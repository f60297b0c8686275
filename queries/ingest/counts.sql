-- Outcome counts per input of the run's records that are not loaded (ingest_out):
-- duplicates, quarantined, and of those the conflicting duplicates of records loaded (or
-- repeats of a loaded id in another Unicode form: records that could be read as mapped,
-- although they were not loaded).
SELECT
    source_row // $stride AS inp,
    count(*) FILTER (WHERE outcome = 'duplicate') AS duplicates,
    count(*) FILTER (WHERE outcome IN ('quarantine', 'conflict', 'unicode')) AS quarantined,
    count(*) FILTER (WHERE outcome IN ('conflict', 'unicode')) AS conflicts
FROM _ing_out
GROUP BY 1
