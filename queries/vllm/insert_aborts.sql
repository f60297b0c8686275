-- Refusals of one vLLM log for engine_aborts, kind 'rejected': requested_tokens the prompt
-- length the line states, max_tokens the limit it states (NULL when none). vLLM names no
-- request with them: rid and bootstrap_room stay NULL.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, CAST(NULL AS VARCHAR) AS rid,
    CAST(NULL AS BIGINT) AS bootstrap_room, input_len AS requested_tokens, max_tokens, ts,
    CAST($source AS VARCHAR) AS source, source_row, 'rejected' AS kind
FROM _engine_parsed
WHERE reason IS NULL AND kind = 'rejected'
