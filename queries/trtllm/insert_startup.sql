-- Startup lines of one TensorRT-LLM log for engine_startup (kind trtllm_<kind>): primary
-- pool blocks, tokens per block (block_size), the paged KV cache allocation (tokens),
-- max_seq_len (context_len; setup 'adjusted' for `Adjusted max_seq_len to N`) and the
-- estimation's end. tags: the rank. A quarantined startup line is kept too, with its
-- `reason` and none of its figures.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, 'trtllm_' || kind AS kind,
    tags, ts,
    CASE WHEN reason IS NULL THEN tokens END AS tokens,
    CASE WHEN reason IS NULL THEN context_len END AS context_len,
    CAST($source AS VARCHAR) AS source, source_row, CAST(NULL AS VARCHAR) AS pool,
    CASE WHEN reason IS NULL THEN setup END AS setup,
    CASE WHEN reason IS NULL THEN blocks END AS blocks,
    CASE WHEN reason IS NULL THEN block_size END AS block_size,
    reason
FROM _engine_parsed
WHERE kind IS NOT NULL
