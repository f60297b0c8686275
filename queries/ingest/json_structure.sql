-- The merged structure of an input's valid JSON objects (for mapping validation), from the
-- first record of each distinct shape (`_ing_shapes`, shapes.sql): exact at every path the
-- mapping reads, and at the top-level columns its { sql } sources read
-- (forensics/ingest/shape.py), without each record's structure; other keys are as those
-- records have them. Those records are read by __row (stored: the others are skipped).
SELECT json_group_structure(json(__j)) AS structure
FROM _ing_json
WHERE __row IN (SELECT first FROM _ing_shapes)
