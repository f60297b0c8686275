-- Startup lines of one vLLM log for engine_startup (kind vllm_<kind>): the args dump
-- (role from kv_role, setup the kv_role, block_size, max_model_len), the engine config line
-- (max_seq_len; setup the version it names), `Using max model len`, `# <device> blocks: N`
-- (blocks), `KV cache size: N tokens` (tokens) and a failed start. `tags` is the process the
-- line came from, `pool` the device a pool line names. A quarantined startup line is kept
-- too, with its `reason` and none of its figures: it sizes nothing, but its start can name it.
SELECT
    CAST($node AS VARCHAR) AS node,
    coalesce(
        CAST($role AS VARCHAR),
        CASE WHEN kind = 'args' AND reason IS NULL THEN coalesce(leg, 'both') END
    ) AS role,
    'vllm_' || kind AS kind, tags, ts,
    CASE WHEN reason IS NULL THEN tokens END AS tokens,
    CASE WHEN reason IS NULL THEN context_len END AS context_len,
    CAST($source AS VARCHAR) AS source, source_row, device AS pool,
    CASE WHEN reason IS NOT NULL THEN NULL WHEN kind = 'args' THEN kv_role
         WHEN kind = 'engine_config' THEN version END AS setup,
    CASE WHEN reason IS NULL THEN blocks END AS blocks,
    CASE WHEN reason IS NULL THEN block_size END AS block_size,
    reason
FROM _engine_parsed
WHERE kind IN ('args', 'engine_config', 'max_model_len', 'blocks', 'kv_tokens', 'failed')
