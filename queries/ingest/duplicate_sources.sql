-- The duplicates of a run that duplicate a record of another input (ingest_classify's
-- of_source, or of_row in another input of the run), per input index and the other input
-- (its path, or its index in the run).
SELECT
    source_row // $stride AS inp,
    of_source,
    of_row // $stride AS of_inp,
    count(*) AS records
FROM _ing_special
WHERE outcome = 'duplicate'
  AND (of_source IS NOT NULL OR of_row // $stride <> source_row // $stride)
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
