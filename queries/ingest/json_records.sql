-- JSONL records, read and parsed in one pass (plain, .gz or .zst): the line when it is a
-- JSON object (else NULL) with its structure (for ingest_json_structure, so that needs no
-- second pass) and, for lines that are not, the reason and, as raw, only the line's length
-- (its text may hold prompts). Blank lines (NULL here) are kept as rows flagged __blank, so
-- that with preserve_insertion_order the table's rowid is the 0-based line number; they are
-- not records. The delimiter is a byte sequence that never occurs in a JSON line (inputs
-- holding it are rewritten first): each line is read whole. $path may list several files
-- (a batch of small inputs): with $filename each row also names its file (`filename`).
SELECT
    CASE WHEN object THEN line END AS __j,
    CASE WHEN object THEN shape END AS __shape,
    CASE WHEN NOT blank AND NOT object THEN 'invalid JSON' END AS __err,
    CASE
        WHEN NOT blank AND NOT object THEN CAST(json_object('bytes', strlen(line)) AS VARCHAR)
    END AS __raw,
    blank AS __blank,
    * EXCLUDE (line, shape, blank, object)  -- filename, when asked for
FROM (
    SELECT
        *,
        -- an object's structure is an object, but for {} ("JSON"); NULL: not JSON
        coalesce(
            starts_with(shape, '{') OR (shape = '"JSON"' AND starts_with(ltrim(line), '{')),
            false
        ) AS object
    FROM (
        -- parsed once: the structure says whether the line is a JSON object
        SELECT
            line,
            CAST(try(json_structure(line)) AS VARCHAR) AS shape,
            line IS NULL OR trim(line) = '' AS blank,
            * EXCLUDE (line)  -- filename, when asked for
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
    )
)
