-- The merged structure of an input's valid JSON objects (for mapping validation), from the
-- first record of each distinct shape (__shape, computed when the input was staged): exact at
-- every path the mapping reads, and at the top-level columns its { sql } sources read
-- (forensics/ingest/shape.py), without each record's structure; other keys are as those
-- records have them.
SELECT json_group_structure(j) AS structure
FROM (
    SELECT json(arg_min(__j, __row)) AS j
    FROM _ing_json
    WHERE __j IS NOT NULL
    GROUP BY __shape
)
