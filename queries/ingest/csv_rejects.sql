-- One row per physical line of a CSV input that DuckDB rejected (1-based line number), with
-- its reason; lines a rewrite replaced (`_ing_side`) keep the reason found then. Raw holds
-- only the line's length: its text may hold prompts.
SELECT
    r.line AS __row,
    coalesce(
        any_value(s.reason),
        CASE any_value(r.error_type)
            WHEN 'INVALID ENCODING' THEN 'invalid UTF-8'
            WHEN 'LINE SIZE OVER MAXIMUM' THEN 'line longer than ' || $max_line_size || ' bytes'
            ELSE 'invalid CSV row'
        END
    ) AS __err,
    CAST(json_object('bytes', coalesce(any_value(s.bytes), strlen(any_value(r.csv_line))))
        AS VARCHAR) AS __raw
FROM _ing_rejects AS r
LEFT JOIN _ing_side AS s ON s.line = r.line
GROUP BY r.line
