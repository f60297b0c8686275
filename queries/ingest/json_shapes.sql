-- The distinct structures of an input's JSON objects, each with how many records have it:
-- which type most records give a field whose records disagree (a number in most, a string in
-- a few).
SELECT __shape, count(*) AS n
FROM _ing_json
WHERE __j IS NOT NULL
GROUP BY __shape
ORDER BY __shape
