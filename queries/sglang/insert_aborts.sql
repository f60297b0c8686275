-- Rejections of one log for engine_aborts. kind: kv_capacity (disaggregation queue, pool
-- size), input_length (scheduler), context_length (tokenizer). bootstrap_room is filled later
-- from the same node's request lines with the same rid.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, rid,
    CAST(NULL AS BIGINT) AS bootstrap_room, input_len AS requested_tokens, max_tokens, ts,
    CAST($source AS VARCHAR) AS source, source_row, kind
FROM _sglang_parsed
WHERE reason IS NULL AND kind IN ('kv_capacity', 'input_length', 'context_length')
