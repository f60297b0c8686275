-- The distinct shapes of an input's JSON objects (`__shape`, forensics/ingest/shape.py) whose
-- records repeat a key in an object holding a mapped key: only those records are checked key
-- by key (compile_mapping's duplicate-key check).
SELECT shape AS __shape
FROM (
    -- the shape as an aggregate, not the grouping key: the test below is not pushed under
    -- the grouping (once per shape, not per record)
    SELECT min(__shape) AS shape FROM _ing_json WHERE __shape IS NOT NULL GROUP BY __shape
)
WHERE list_bool_or(list_transform(
    CAST(json_extract(shape, '$.k') AS VARCHAR[][]),
    lambda keys: coalesce(len(keys) <> len(list_distinct(keys)), false)
))
