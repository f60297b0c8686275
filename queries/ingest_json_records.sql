-- JSONL records: 1-based line number, the parsed object (NULL when the line is not a JSON
-- object) and, for lines that are not, the raw text and the reason. Blank lines are not records.
SELECT
    rowid + 1 AS __row,
    CASE WHEN json_type(try(json(line))) = 'OBJECT' THEN try(json(line)) END AS __j,
    CASE WHEN json_type(try(json(line))) = 'OBJECT' THEN NULL ELSE 'invalid JSON' END AS __err,
    CASE WHEN json_type(try(json(line))) = 'OBJECT' THEN NULL ELSE line END AS __raw
FROM _ing_lines
WHERE line IS NOT NULL AND trim(line) <> ''
