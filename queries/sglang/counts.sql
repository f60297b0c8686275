-- Per-input accounting of the parsed lines: loaded into an engine table, or quarantined.
SELECT
    count(*) FILTER (WHERE reason IS NULL AND kind <> 'role_marker') AS loaded,
    count(*) FILTER (WHERE reason IS NOT NULL) AS quarantined
FROM _sglang_parsed
