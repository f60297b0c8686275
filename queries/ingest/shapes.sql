-- The distinct shapes of an input's JSON objects (`_ing_json`; __shape, computed when the input
-- was staged: forensics/ingest/shape.py), each with its first record's __row and how many
-- records have it: the one pass over the shapes that json_structure.sql, json_shapes.sql and
-- shape_keys.sql read.
SELECT __shape, min(__row) AS first, count(*) AS n
FROM _ing_json
WHERE __shape IS NOT NULL  -- a JSON object (its text, __j, is not read)
GROUP BY __shape
