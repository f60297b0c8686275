-- Parquet rows with their 1-based row number, read where they are used (a view: no staged
-- copy), and the file's own 0-based row number `__fr`, on which a filter reaches the scan.
-- The file's path is the session variable `_ing_path_N`, N the input's index (ingest sets
-- the variable and puts the index in the name).
SELECT
    file_row_number + 1 AS __row,
    file_row_number AS __fr,
    NULL::VARCHAR AS __err,
    NULL::VARCHAR AS __raw,
    * EXCLUDE (file_row_number)
FROM read_parquet(getvariable('_ing_path_N'), file_row_number = true)
