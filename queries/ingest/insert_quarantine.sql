-- Quarantine the records of one input (its path bound as source) that cannot be loaded, raw
-- text cut at 2 KB. Raw text is rendered here, for these records only (`_ing_raw`: __row ->
-- the record as text).
INSERT INTO quarantine
SELECT
    $source, o.source_row, coalesce(o.reason, 'conflicting duplicate'),
    left(coalesce(o.raw, r.raw), $raw_limit)
FROM _ing_out AS o
LEFT JOIN _ing_raw AS r ON r.__row = o.source_row
WHERE o.outcome IN ('quarantine', 'conflict', 'unicode')
