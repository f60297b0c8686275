-- The records of one input that are not loaded, with their outcome: quarantine (the typed
-- records that failed a check, `_ing_reasons`) | duplicate | conflict (ingest_classify).
SELECT source_row, reason, raw, 'quarantine' AS outcome
FROM _ing_reasons
UNION ALL
SELECT source_row, NULL AS reason, NULL AS raw, outcome
FROM _ing_special
WHERE outcome <> 'load'
