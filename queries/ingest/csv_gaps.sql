-- The physical lines of a CSV input that start no record (inputfile._CsvLines): blank lines,
-- with the number DuckDB gives them (it counts them), and lines a quoted value spanning lines
-- continues on (duckdb_line NULL: DuckDB counts a record as one line).
SELECT *
FROM read_csv(
    $path,
    columns = {'line': 'BIGINT', 'duckdb_line': 'BIGINT'},
    header = true,
    auto_detect = false,
    quote = '',
    escape = ''
)
