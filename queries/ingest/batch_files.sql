-- The files of a staged JSONL batch (`_ing_lines`, read in one pass with their file name):
-- each file's input index, first rowid and lines. The lines of a file are rowids start ..
-- start + lines - 1 when they are contiguous (`ok`); the table's rowids are the read order.
WITH f AS (SELECT unnest($paths) AS path, unnest($inps) AS inp),
spans AS (
    SELECT filename AS path, min(rowid) AS start, max(rowid) AS last, count(*) AS lines
    FROM _ing_lines
    GROUP BY filename
)
SELECT f.path, f.inp, s.start, s.lines, s.last - s.start + 1 = s.lines AS ok
FROM spans AS s
LEFT JOIN f ON f.path = s.path
