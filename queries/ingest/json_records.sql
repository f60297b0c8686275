-- JSONL records, read and parsed in one pass (plain, .gz or .zst): the line when it is a
-- JSON object (else NULL) with its structure (for ingest_json_structure, so that needs no
-- second pass) and, for lines that are not, the raw text and the reason. Blank lines (NULL
-- here) are kept as rows flagged __blank, so that with preserve_insertion_order the table's
-- rowid is the 0-based line number; they are not records. The delimiter is a byte sequence
-- that never occurs in JSON text: each line is read whole.
SELECT
    CASE WHEN try(json_type(line)) = 'OBJECT' THEN line END AS __j,
    CASE
        WHEN try(json_type(line)) = 'OBJECT' THEN CAST(json_structure(line) AS VARCHAR)
    END AS __shape,
    CASE
        WHEN line IS NULL OR trim(line) = '' OR try(json_type(line)) = 'OBJECT' THEN NULL
        ELSE 'invalid JSON'
    END AS __err,
    CASE
        WHEN line IS NULL OR trim(line) = '' OR try(json_type(line)) = 'OBJECT' THEN NULL
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
