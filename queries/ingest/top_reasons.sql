-- The three most frequent quarantine reasons of each input's records (`_ing_out`), with
-- their counts: what ingest prints for each input, and names when an input loads no record.
SELECT inp, reason, records
FROM (
    SELECT
        inp,
        reason,
        records,
        row_number() OVER (PARTITION BY inp ORDER BY records DESC, reason) AS n
    FROM (
        SELECT
            source_row // $stride AS inp,
            coalesce(reason, 'conflicting duplicate') AS reason,
            count(*) AS records
        FROM _ing_out
        WHERE outcome IN ('quarantine', 'conflict', 'unicode')
        GROUP BY 1, 2
    )
)
WHERE n <= 3
ORDER BY inp, n
