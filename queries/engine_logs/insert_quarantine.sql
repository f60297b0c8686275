-- Malformed evidence lines of one engine log, with the reason (raw withheld where the line
-- may hold a prompt: each parse query leaves it NULL there). Params: $source.
SELECT CAST($source AS VARCHAR) AS source, source_row AS row, reason, raw
FROM _engine_parsed
WHERE kind IS NOT NULL AND reason IS NOT NULL
