-- Per input and { sql } source that failed on some of its records: how many, and the first
-- (input index * $stride + row), explained once the load has committed.
SELECT source_row // $stride AS inp, reason, count(*) AS records, min(source_row) AS first_row
FROM _ing_out
WHERE starts_with(reason, 'sql of ')
GROUP BY 1, 2
ORDER BY 1, 2
