-- The merged structure of each input's valid JSON objects in a staged batch (`_ing_json`:
-- __row = input index * $stride + line), as json_structure.sql computes it for one input:
-- inputs whose structures let the mapping compile alike are loaded as one run.
SELECT inp, CAST(json_group_structure(j) AS VARCHAR) AS structure
FROM (
    SELECT __row // $stride AS inp, json(arg_min(__j, __row)) AS j
    FROM _ing_json
    WHERE __j IS NOT NULL
    GROUP BY 1, __shape
)
GROUP BY inp
