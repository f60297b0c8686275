-- Parquet rows with their 1-based row number.
SELECT
    file_row_number + 1 AS __row,
    NULL::VARCHAR AS __err,
    NULL::VARCHAR AS __raw,
    * EXCLUDE (file_row_number)
FROM read_parquet($path, file_row_number = true)
