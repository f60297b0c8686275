-- Per distinct structure of an input's JSON objects (`__shape`, which merges repeated keys),
-- how many distinct keys the objects at $key_paths hold: a record holding more keys there
-- repeats one (compile_mapping's duplicate-key check).
SELECT __shape, len(flatten(json_keys(__shape, $key_paths))) AS __nk
FROM (SELECT DISTINCT __shape FROM _ing_json WHERE __shape IS NOT NULL)
