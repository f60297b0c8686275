-- Malformed evidence lines of one log, with the reason (raw withheld for request log lines).
SELECT CAST($source AS VARCHAR) AS source, source_row AS row, reason, raw
FROM _sglang_parsed
WHERE reason IS NOT NULL
