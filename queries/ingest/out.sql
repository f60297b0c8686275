-- The records of one input that are not loaded, with their outcome: quarantine (the typed
-- records that failed a check, `_ing_reasons`) | duplicate | conflict | unicode
-- (ingest_classify).
SELECT source_row, reason, raw, 'quarantine' AS outcome
FROM _ing_reasons
UNION ALL
SELECT
    source_row,
    CASE
        WHEN outcome = 'unicode'
        THEN 'request_id differs from an earlier record''s only by Unicode normalization'
    END AS reason,
    NULL AS raw,
    outcome
FROM _ing_special
WHERE outcome <> 'load'
