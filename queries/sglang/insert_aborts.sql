-- Rejections and failures of one log for engine_aborts. kind: input_length (scheduler intake,
-- rid from `, self.rid='...'`), truncated (the same check under --allow-auto-truncate: the
-- prompt was cut, not refused), kv_capacity (disaggregation queue), context_length
-- (tokenizer), transfer_failed (a decode leg that never received its KV). bootstrap_room,
-- when the line lacks it, is filled later from the same node's request lines with the rid.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, rid, bootstrap_room,
    input_len AS requested_tokens, max_tokens, ts, CAST($source AS VARCHAR) AS source,
    source_row, kind
FROM _engine_parsed
WHERE reason IS NULL
    AND kind IN ('kv_capacity', 'input_length', 'truncated', 'context_length', 'transfer_failed')
