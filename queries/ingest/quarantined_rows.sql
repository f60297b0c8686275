-- The rows of the run not loaded for a reason of their own (`_ing_out`): quarantined, or
-- conflicting duplicates (whose raw values are kept with their quarantine rows).
SELECT source_row FROM _ing_out WHERE outcome IN ('quarantine', 'conflict', 'unicode')
