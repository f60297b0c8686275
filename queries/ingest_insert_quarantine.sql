-- Quarantine the records of one input that cannot be loaded, raw text cut at 2 KB.
INSERT INTO quarantine
SELECT source, source_row, coalesce(reason, 'conflicting duplicate'), left(raw, $raw_limit)
FROM _ing_out
WHERE outcome IN ('quarantine', 'conflict')
