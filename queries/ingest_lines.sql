-- Raw lines of a JSONL/NDJSON input (plain, .gz or .zst), one VARCHAR per physical line.
-- Blank lines come back as NULL; with preserve_insertion_order the table's rowid is the
-- 0-based line number. The delimiter is a byte sequence that never occurs in JSON text.
SELECT line
FROM read_csv(
    $path,
    columns = {'line': 'VARCHAR'},
    delim = $delim,
    quote = '',
    escape = '',
    header = false,
    auto_detect = false,
    strict_mode = false,
    max_line_size = $max_line_size,
    buffer_size = $buffer_size
)
