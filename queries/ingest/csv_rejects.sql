-- One row per CSV record DuckDB rejected, at its 1-based physical line, with its reason and
-- its data position __q (the how-many-th record after the header lines, rejected or not).
-- DuckDB numbers a reject's line counting the header lines and blank lines but a record
-- spanning lines as one: less the header lines and the blank lines before it, that is its
-- data position; the physical line is then the header lines + the data position + the lines
-- before it that start no record (`_ing_csv_gaps`; as in ingest_csv_records). Lines a rewrite
-- replaced (`_ing_side`) keep the reason found then. Raw holds only the record's length: its
-- text may hold prompts.
WITH rej AS (
    SELECT
        line AS d,
        any_value(error_type) AS error_type,
        max(column_idx) AS fields,
        any_value(csv_line) AS csv_line
    FROM _ing_rejects
    GROUP BY line
),
blanks AS (
    SELECT duckdb_line AS d, row_number() OVER (ORDER BY duckdb_line) AS n
    FROM _ing_csv_gaps
    WHERE duckdb_line IS NOT NULL
),
placed AS (
    SELECT rej.*, rej.d - $header_lines - coalesce(b.n, 0) AS q
    FROM rej
    ASOF LEFT JOIN blanks AS b ON rej.d > b.d
),
steps AS (
    SELECT q, max(i) AS i
    FROM (
        SELECT line - $header_lines - row_number() OVER (ORDER BY line) AS q,
            row_number() OVER (ORDER BY line) AS i
        FROM _ing_csv_gaps
    )
    GROUP BY q
),
physical AS (
    SELECT placed.*, $header_lines + placed.q + coalesce(g.i, 0) AS line
    FROM placed
    ASOF LEFT JOIN steps AS g ON placed.q > g.q
)
SELECT
    p.line AS __row,
    p.q AS __q,
    coalesce(
        s.reason,
        CASE p.error_type
            WHEN 'INVALID ENCODING' THEN 'invalid UTF-8'
            WHEN 'LINE SIZE OVER MAXIMUM' THEN 'line longer than ' || $max_line_size || ' bytes'
            WHEN 'TOO MANY COLUMNS' THEN
                'invalid CSV row (' || p.fields || ' fields where the header has '
                || $columns || ')'
            WHEN 'MISSING COLUMNS' THEN
                'invalid CSV row (' || p.fields || ' fields where the header has '
                || $columns || ')'
            ELSE 'invalid CSV row'
        END
    ) AS __err,
    CAST(json_object(
        'bytes', coalesce(s.bytes, strlen(ltrim(p.csv_line, chr(13) || chr(10))))
    ) AS VARCHAR) AS __raw
FROM physical AS p
LEFT JOIN _ing_side AS s ON s.line = p.line
