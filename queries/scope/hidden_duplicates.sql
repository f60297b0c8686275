-- Records of the case's own inputs not loaded because they duplicate records of an input the
-- case does not name (`case_unnamed_inputs`), which the analysis leaves out: per input and
-- that other input, how many, by path.
SELECT d.path, d.of_path, CAST(sum(d.records) AS BIGINT) AS records
FROM input_duplicates AS d
WHERE d.path NOT IN (SELECT path FROM case_unnamed_inputs)
  AND d.of_path IN (SELECT path FROM case_unnamed_inputs)
GROUP BY d.path, d.of_path
ORDER BY d.path, d.of_path
