-- The structure of the first record of each distinct shape of an input's JSON objects
-- (`_ing_shapes`, shapes.sql), with how many records have that shape: which type most
-- records give a field whose records disagree (a number in most, a string in a few). Records
-- of one shape agree on the type at every path the mapping reads (forensics/ingest/shape.py).
SELECT CAST(json_structure(j.__j) AS VARCHAR) AS shape, s.n
FROM _ing_shapes AS s
JOIN _ing_json AS j ON j.__row = s.first
ORDER BY s.__shape
