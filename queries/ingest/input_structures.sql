-- The merged structure of each input's valid JSON objects in a staged batch (`_ing_json`:
-- __row = input index * $stride + line), as json_structure.sql computes it for one input:
-- inputs whose structures let the mapping compile alike are loaded as one run.
SELECT __row // $stride AS inp, CAST(json_group_structure(json(__j)) AS VARCHAR) AS structure
FROM _ing_json
WHERE __row IN (
    SELECT min(__row) FROM _ing_json WHERE __shape IS NOT NULL GROUP BY __row // $stride, __shape
)
GROUP BY inp
