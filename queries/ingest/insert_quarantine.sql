-- Quarantine the records of the run's inputs that cannot be loaded, raw text cut at 2 KB,
-- each under its input's path ($sources, from input $base on; source_row = input index *
-- $stride + row). Raw text is rendered here, for these records only (`_ing_raw`: __row ->
-- the record as text).
INSERT INTO quarantine
SELECT
    $sources[o.source_row // $stride - $base + 1],
    o.source_row % $stride,
    coalesce(o.reason, 'conflicting duplicate'),
    left(coalesce(o.raw, r.raw), $raw_limit)
FROM _ing_out AS o
LEFT JOIN _ing_raw AS r ON r.__row = o.source_row
WHERE o.outcome IN ('quarantine', 'conflict', 'unicode')
