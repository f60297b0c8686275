-- JSONL records (`_ing_numbered`: the lines as read, json_lines.sql, each with its __row; see
-- staging.parse_lines), parsed in one pass: __row (stored, so that reading a few records by
-- it skips the rest), the line when it is a JSON object (else NULL) with its shape under the
-- mapping (`__shape`, forensics/ingest/shape.py: the keys of the objects at $levels; the JSON
-- types at $paths, `_ing_types_`; the structures `_ing_structures_` of the { sql } top-level
-- columns when one holds an object or list, `_ing_nested_`; staging.parse_lines writes those
-- three) and, for lines that are not objects, the reason and, as raw, only the line's length
-- (its text may hold prompts). Blank lines are kept as rows flagged __blank; they are not
-- records.
SELECT
    __row,
    CASE WHEN object THEN line END AS __j,
    CASE
        WHEN object THEN CAST(to_json(struct_pack(
            k := keys,
            t := types,
            s := CASE WHEN _ing_nested_ THEN _ing_structures_ END
        )) AS VARCHAR)
    END AS __shape,
    CASE WHEN NOT blank AND NOT object THEN 'invalid JSON' END AS __err,
    CASE
        WHEN NOT blank AND NOT object THEN CAST(json_object('bytes', strlen(line)) AS VARCHAR)
    END AS __raw,
    blank AS __blank
FROM (
    SELECT
        *,
        CASE WHEN object THEN _ing_types_ END AS types,
        -- trim copies the text: only for a line that is not an object
        CASE WHEN object THEN false ELSE line IS NULL OR trim(line) = '' END AS blank
    FROM (
        SELECT
            *,
            -- JSON (its keys read) whose first character is a brace: the root's keys
            -- ($levels[1] is '$') say so, but for {}, which its text tells
            coalesce(
                keys IS NOT NULL AND CASE
                    WHEN len(keys[1]) > 0 THEN true
                    ELSE starts_with(ltrim(line, e' \t'), '{')
                END,
                false
            ) AS object
        FROM (
            -- parsed for the keys; NULL: not JSON
            SELECT __row, line, try(json_keys(line, $levels)) AS keys FROM _ing_numbered
        )
    )
)
