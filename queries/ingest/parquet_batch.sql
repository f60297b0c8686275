-- The rows of the Parquet files of one staged batch ($paths, all of one schema), read in one
-- pass: a row's __row is its input's index ($inps, in the order of $paths) * $stride + its
-- 1-based row number in its file.
SELECT
    CAST($inps[CAST(file_index AS BIGINT) + 1] * $stride + file_row_number + 1 AS BIGINT) AS __row,
    NULL::VARCHAR AS __err,
    NULL::VARCHAR AS __raw,
    * EXCLUDE (file_row_number)
FROM read_parquet($paths, file_row_number = true)
