-- The lines of JSONL input(s) as read, one row each in file order (plain, .gz or .zst), and
-- nothing else: for a compressed file this read is single-threaded, so the parsing
-- (json_records.sql, over this table) runs after it on every thread. Blank lines are rows
-- too (NULL), so that with preserve_insertion_order the table's rowid is the 0-based line
-- number. The delimiter is a byte sequence that never occurs in a JSON line (inputs holding
-- it are rewritten first): each line is read whole. $path may list several files (a batch of
-- small inputs): with $filename each row also names its file (`filename`).
SELECT *
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
    buffer_size = $buffer_size,
    filename = $filename
)
