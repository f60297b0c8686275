-- What the parsed lines of one log say about the server's role: the server_args
-- disaggregation_mode (strongest), else the type= of its ReqTimeStats lines.
SELECT kind, leg, count(*) AS n
FROM _sglang_parsed
WHERE reason IS NULL AND leg IS NOT NULL AND kind IN ('server_args', 'time_stats')
GROUP BY kind, leg
ORDER BY kind, leg
