-- Valid CSV rows with their 1-based physical line number. The k-th valid row is record
-- (data position) q = k + (rejected records before it): rejected record j (by position) has
-- q_j - j valid rows before it, so an ASOF join on k > q_j - j counts them. Record q starts
-- on physical line header_lines + q + (lines before it that start no record: blank lines and
-- lines a quoted value continues on, `_ing_csv_gaps`): gap i (by line) has line_i -
-- header_lines - i records before it, the same ASOF step.
WITH rej AS (
    SELECT __q AS q, row_number() OVER (ORDER BY __q) AS j FROM _ing_csv_rejects
),
rsteps AS (
    SELECT q - j AS t, max(j) AS j FROM rej GROUP BY q - j
),
gsteps AS (
    SELECT q, max(i) AS i
    FROM (
        SELECT line - $header_lines - row_number() OVER (ORDER BY line) AS q,
            row_number() OVER (ORDER BY line) AS i
        FROM _ing_csv_gaps
    )
    GROUP BY q
),
rows AS (
    SELECT rowid + 1 AS __k, * FROM _ing_csv
),
placed AS (
    SELECT rows.*, rows.__k + coalesce(rsteps.j, 0) AS __q
    FROM rows
    ASOF LEFT JOIN rsteps ON rows.__k > rsteps.t
)
SELECT
    $header_lines + placed.__q + coalesce(g.i, 0) AS __row,
    NULL::VARCHAR AS __err,
    NULL::VARCHAR AS __raw,
    placed.* EXCLUDE (__k, __q)
FROM placed
ASOF LEFT JOIN gsteps AS g ON placed.__q > g.q
