-- Startup lines of one TensorRT-LLM log for engine_startup (kind trtllm_<kind>): primary
-- pool blocks, tokens per block (block_size), the paged KV cache allocation (tokens) and
-- max_seq_len (context_len; setup 'adjusted' for `Adjusted max_seq_len to N`). tags: the rank.
SELECT
    CAST($node AS VARCHAR) AS node, CAST($role AS VARCHAR) AS role, 'trtllm_' || kind AS kind,
    tags, ts, tokens, context_len, CAST($source AS VARCHAR) AS source, source_row,
    CAST(NULL AS VARCHAR) AS pool, setup, blocks, block_size
FROM _engine_parsed
WHERE reason IS NULL AND kind IS NOT NULL
