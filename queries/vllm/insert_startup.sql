-- Startup lines of one vLLM log for engine_startup (kind vllm_<kind>): the args dump
-- (role from kv_role, block_size, max_model_len), the engine config line (max_seq_len),
-- `Using max model len`, `# <device> blocks: N` (blocks), `KV cache size: N tokens`
-- (tokens) and a failed start. `tags` is the process the line came from.
SELECT
    CAST($node AS VARCHAR) AS node,
    coalesce(CAST($role AS VARCHAR), CASE WHEN kind = 'args' THEN coalesce(leg, 'both') END) AS role,
    'vllm_' || kind AS kind, tags, ts, tokens, context_len, CAST($source AS VARCHAR) AS source,
    source_row, device AS pool, kv_role AS setup, blocks, block_size
FROM _engine_parsed
WHERE reason IS NULL
    AND kind IN ('args', 'engine_config', 'max_model_len', 'blocks', 'kv_tokens', 'failed')
