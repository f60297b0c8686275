-- JSONL records (`_ing_lines`, json_lines.sql: the lines as read), parsed in one pass: the
-- line when it is a JSON object (else NULL) with its shape under the mapping (`__shape`,
-- forensics/ingest/shape.py: the JSON types at $paths, the keys of the objects at $levels,
-- the structure of the { sql } columns at positions $tops of $paths when one holds an object
-- or list: `_ing_nested_`, replaced by the test of those types, see staging.parse_lines)
-- and, for lines that are not objects, the reason and, as raw, only the line's
-- length (its text may hold prompts). Blank lines are kept as rows flagged __blank (in line
-- order: the table's rowid is the 0-based line number); they are not records. `filename` is
-- kept when the lines have it (a batch of small inputs).
SELECT
    CASE WHEN object THEN line END AS __j,
    CASE
        WHEN object THEN CAST(to_json(struct_pack(
            t := types,
            k := json_keys(line, $levels),
            s := CASE
                WHEN _ing_nested_ THEN list_transform(
                        json_extract(line, list_select($paths, $tops)),
                        lambda v: json_structure(v)
                    )
            END
        )) AS VARCHAR)
    END AS __shape,
    CASE WHEN NOT blank AND NOT object THEN 'invalid JSON' END AS __err,
    CASE
        WHEN NOT blank AND NOT object THEN CAST(json_object('bytes', strlen(line)) AS VARCHAR)
    END AS __raw,
    blank AS __blank,
    * EXCLUDE (line, types, blank, object)  -- filename, when there
FROM (
    SELECT
        *,
        -- trim copies the text: only for a line that is not an object
        CASE WHEN object THEN false ELSE line IS NULL OR trim(line) = '' END AS blank
    FROM (
        -- parsed once for the types; NULL: not JSON
        SELECT *, coalesce(types[1] = 'OBJECT', false) AS object
        FROM (SELECT line, try(json_type(line, $paths)) AS types, * EXCLUDE (line) FROM _ing_lines)
    )
)
