-- The role the parsed lines of one SGLang log give: the disaggregation_mode of its
-- server_args lines (strongest), else the type= of its ReqTimeStats lines; one row per role
-- of the strongest kind present (two rows: lines of both roles).
WITH legs AS (
    SELECT kind, leg
    FROM _engine_parsed
    WHERE reason IS NULL AND leg IS NOT NULL AND kind IN ('server_args', 'time_stats')
)
SELECT DISTINCT leg AS role
FROM legs
WHERE kind = (SELECT min(kind) FROM legs)
ORDER BY role
