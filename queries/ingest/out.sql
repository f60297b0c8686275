-- The records of one input that are not loaded, with their outcome: quarantine (typed rows
-- with a reason: `_ing_typed` holds the candidates and the rows the direct load left) |
-- duplicate | conflict (ingest_classify).
SELECT source_row, reason, raw, 'quarantine' AS outcome
FROM _ing_typed
WHERE reason IS NOT NULL
UNION ALL
SELECT source_row, NULL AS reason, NULL AS raw, outcome
FROM _ing_special
WHERE outcome <> 'load'
