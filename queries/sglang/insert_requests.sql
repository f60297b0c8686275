-- Per-request lines of one log (ReqTimeStats, Finish, Receive, metrics export records) for
-- engine_requests. role: the line's own type= where it names prefill or decode, else the
-- server's role.
SELECT
    CAST($node AS VARCHAR) AS node, coalesce(leg, CAST($role AS VARCHAR)) AS role, rid,
    bootstrap_room, input_len, output_len, ts, CAST($source AS VARCHAR) AS source, source_row,
    kind, finish_reason
FROM _engine_parsed
WHERE reason IS NULL AND kind IN ('time_stats', 'finish', 'receive', 'metrics')
