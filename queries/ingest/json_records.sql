-- JSONL records, read and parsed in one pass (plain, .gz or .zst): the line when it is a
-- JSON object (else NULL) with its structure (for ingest_json_structure, so that needs no
-- second pass) and, for lines that are not, the reason and, as raw, only the line's length
-- (its text may hold prompts). Blank lines (NULL here) are kept as rows flagged __blank, so
-- that with preserve_insertion_order the table's rowid is the 0-based line number; they are
-- not records. The delimiter is a byte sequence that never occurs in a JSON line (inputs
-- holding it are rewritten first): each line is read whole.
SELECT
    CASE WHEN t = 'OBJECT' THEN line END AS __j,
    CASE WHEN t = 'OBJECT' THEN CAST(json_structure(line) AS VARCHAR) END AS __shape,
    CASE WHEN NOT blank AND t IS DISTINCT FROM 'OBJECT' THEN 'invalid JSON' END AS __err,
    CASE
        WHEN NOT blank AND t IS DISTINCT FROM 'OBJECT'
        THEN CAST(json_object('bytes', strlen(line)) AS VARCHAR)
    END AS __raw,
    blank AS __blank
FROM (
    SELECT line, try(json_type(line)) AS t, line IS NULL OR trim(line) = '' AS blank
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
)
