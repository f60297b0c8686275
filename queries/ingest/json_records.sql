-- JSONL records (`_ing_lines`, json_lines.sql: the lines as read), parsed in one pass: the
-- line when it is a JSON object (else NULL) with its structure (for ingest_json_structure,
-- so that needs no second pass) and, for lines that are not, the reason and, as raw, only
-- the line's length (its text may hold prompts). Blank lines are kept as rows flagged
-- __blank (in line order: the table's rowid is the 0-based line number); they are not
-- records. `filename` is kept when the lines have it (a batch of small inputs).
SELECT
    CASE WHEN object THEN line END AS __j,
    CASE WHEN object THEN shape END AS __shape,
    CASE WHEN NOT blank AND NOT object THEN 'invalid JSON' END AS __err,
    CASE
        WHEN NOT blank AND NOT object THEN CAST(json_object('bytes', strlen(line)) AS VARCHAR)
    END AS __raw,
    blank AS __blank,
    * EXCLUDE (line, shape, blank, object)  -- filename, when there
FROM (
    SELECT
        *,
        -- trim copies the text: only for a line that is not an object
        CASE WHEN object THEN false ELSE line IS NULL OR trim(line) = '' END AS blank
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
            SELECT line, CAST(try(json_structure(line)) AS VARCHAR) AS shape, * EXCLUDE (line)
            FROM _ing_lines
        )
    )
)
