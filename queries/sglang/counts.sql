-- Per-input accounting of the parsed lines: loaded into an engine table, a duplicate (an
-- `[http_server] Error:` line repeating an abort message), or quarantined.
SELECT
    count(*) FILTER (WHERE reason IS NULL AND kind <> 'http_repeat') AS loaded,
    count(*) FILTER (WHERE reason IS NULL AND kind = 'http_repeat') AS duplicates,
    count(*) FILTER (WHERE reason IS NOT NULL) AS quarantined
FROM _engine_parsed
