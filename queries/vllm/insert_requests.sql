-- Request lines of one vLLM log for engine_requests (kind received, added, aborted,
-- preempted): evidence of load; an `Aborted request(s) a,b.` line gives one row per id.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, unnest(string_split(rid, ',')) AS rid,
    CAST(NULL AS BIGINT) AS bootstrap_room, CAST(NULL AS BIGINT) AS input_len,
    CAST(NULL AS BIGINT) AS output_len, ts, CAST($source AS VARCHAR) AS source, source_row, kind,
    CAST(NULL AS VARCHAR) AS finish_reason
FROM _engine_parsed
WHERE reason IS NULL AND kind IN ('received', 'added', 'aborted', 'preempted')
