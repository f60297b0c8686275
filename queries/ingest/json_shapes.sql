-- The structure of the first record of each distinct shape of an input's JSON objects, with
-- how many records have that shape: which type most records give a field whose records
-- disagree (a number in most, a string in a few). Records of one shape agree on the type at
-- every path the mapping reads (forensics/ingest/shape.py).
SELECT CAST(json_structure(arg_min(__j, __row)) AS VARCHAR) AS shape, count(*) AS n
FROM _ing_json
WHERE __j IS NOT NULL
GROUP BY __shape
ORDER BY __shape
