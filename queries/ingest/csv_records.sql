-- Valid CSV rows with their 1-based physical line number (header = line 1). The k-th valid
-- row sits at data position k + (rejected rows before it): rejected row j (by line) has
-- p_j - j valid rows before it, so an ASOF join on k > p_j - j counts them.
WITH rej AS (
    SELECT __row - 1 AS p, row_number() OVER (ORDER BY __row) AS j FROM _ing_csv_rejects
),
steps AS (
    SELECT p - j AS q, max(j) AS j FROM rej GROUP BY p - j
),
rows AS (
    SELECT rowid + 1 AS __k, * FROM _ing_csv
)
SELECT
    rows.__k + coalesce(steps.j, 0) + 1 AS __row,
    NULL::VARCHAR AS __err,
    NULL::VARCHAR AS __raw,
    rows.* EXCLUDE (__k)
FROM rows
ASOF LEFT JOIN steps ON rows.__k > steps.q
