-- The rows of a CSV input as text; rows DuckDB cannot parse go to the rejects table.
SELECT *
FROM read_csv(
    $path,
    header = true,
    all_varchar = true,
    ignore_errors = true,
    store_rejects = true,
    rejects_table = '_ing_rejects',
    rejects_scan = '_ing_rejects_scan',
    max_line_size = $max_line_size,
    buffer_size = $buffer_size
)
