-- JSONL records, read and parsed in one pass (plain, .gz or .zst): the parsed object (NULL
-- when the line is not a JSON object) and, for lines that are not, the raw text and the
-- reason. Blank lines (NULL here) are kept as rows flagged __blank, so that with
-- preserve_insertion_order the table's rowid is the 0-based line number; they are not
-- records. The delimiter is a byte sequence that never occurs in JSON text: each line whole.
SELECT
    CASE WHEN json_type(try(json(line))) = 'OBJECT' THEN try(json(line)) END AS __j,
    CASE
        WHEN line IS NULL OR trim(line) = '' OR json_type(try(json(line))) = 'OBJECT' THEN NULL
        ELSE 'invalid JSON'
    END AS __err,
    CASE
        WHEN line IS NULL OR trim(line) = '' OR json_type(try(json(line))) = 'OBJECT' THEN NULL
        ELSE line
    END AS __raw,
    line IS NULL OR trim(line) = '' AS __blank
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
