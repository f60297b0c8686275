-- The merged structure of every valid JSON object of an input (for mapping validation).
-- One representative object per distinct per-record structure (__shape, computed when the
-- input was staged) is merged: the same result as merging every record, without
-- json_group_structure's per-row state (GBs at 1M records).
SELECT json_group_structure(j) AS structure
FROM (
    SELECT json(any_value(__j)) AS j
    FROM _ing_json
    WHERE __j IS NOT NULL
    GROUP BY __shape
)
