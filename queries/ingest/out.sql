-- Each record of one input -> outcome: load | duplicate | conflict | quarantine. Records
-- with a reason are quarantined; those compared by content take their outcome from
-- `_ing_special` (ingest_classify); every other valid record is the only one of its id: load.
SELECT
    t.*,
    CASE
        WHEN t.reason IS NOT NULL THEN 'quarantine'
        ELSE coalesce(s.outcome, 'load')
    END AS outcome
FROM _ing_typed AS t
LEFT JOIN _ing_special AS s ON s.source_row = t.source_row
