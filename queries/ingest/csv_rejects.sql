-- One row per physical line of a CSV input that DuckDB rejected (1-based line number).
SELECT line AS __row, 'invalid CSV row' AS __err, any_value(csv_line) AS __raw
FROM _ing_rejects
GROUP BY line
