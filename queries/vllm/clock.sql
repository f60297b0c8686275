-- The month-day clock of one vLLM log before its year is known (forensics.ingest.engine_logs
-- chains the logs of a node by it): the month-day-time of its first and last headed line (in
-- a leap year, 2000) and how many times its month-day falls more than half a year below the
-- line before it (each starts the next year: 12-31 -> 01-01). Same line head as parse.sql.
-- Params: $path.
WITH md AS (
    SELECT
        source_row,
        try_cast(
            '2000-' || h.mo || '-' || h.dd || ' ' || h.hh || ':' || h.mi || ':' || h.ss
            AS TIMESTAMP) AS md_ts
    FROM (
        SELECT
            source_row,
            regexp_extract(
                line,
                '^(?:\([^()]* pid=\d+\) )?.*?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,]\d+)? \[?[^\s\]]+\.py:\d+\]',
                ['mo', 'dd', 'hh', 'mi', 'ss']
            ) AS h
        FROM _engine_log_lines(CAST($path AS VARCHAR))
        WHERE line IS NOT NULL
    )
    WHERE h.mo <> ''
),
wrapped AS (
    SELECT
        source_row,
        md_ts,
        CASE WHEN md_ts < lag(md_ts) OVER (ORDER BY source_row) - INTERVAL 183 DAY
             THEN 1 ELSE 0 END AS wrap
    FROM md
    WHERE md_ts IS NOT NULL
)
SELECT
    arg_min(md_ts, source_row) AS first_md,
    arg_max(md_ts, source_row) AS last_md,
    coalesce(sum(wrap), 0) AS wraps
FROM wrapped
