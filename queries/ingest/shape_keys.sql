-- The distinct shapes of an input's JSON objects (`_ing_shapes`, shapes.sql) whose records
-- repeat a key in an object holding a mapped key: only those records are checked key by key
-- (compile_mapping's duplicate-key check).
SELECT __shape
FROM _ing_shapes
WHERE list_bool_or(list_transform(
    CAST(json_extract(__shape, '$.k') AS VARCHAR[][]),
    lambda keys: coalesce(len(keys) <> len(list_distinct(keys)), false)
))
