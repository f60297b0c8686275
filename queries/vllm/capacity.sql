-- vLLM capacity spans: one per start with a pool (engine_starts rows of the logs read as
-- vLLM's, `inputs.format`), from its first pool line to where the node's next start begins
-- (a failed start, or one without a readable pool, still ends the span before it). A failed
-- start has no span. reject_from is not derived: vLLM refuses by max_model_len, which it
-- never starts above its pool. role both (kv_both, or no kv_transfer_config) gives a span
-- per role.
SELECT
    node,
    unnest(CASE WHEN role = 'both' THEN ['prefill', 'decode'] ELSE [role] END) AS role,
    tokens,
    context_len,
    start_ts,
    next_ts AS end_ts,
    source,
    source_row,
    CAST(NULL AS BIGINT) AS reject_from,
    CASE
        WHEN disagrees
            THEN _disagreement_note(lo_text, lo_source, lo_row, hi_text, hi_source, hi_row)
        WHEN kv_values > 1
            THEN 'the workers printed different pools (' || kv_tokens || ' .. ' || kv_tokens_max
                || ' tokens): the smallest is in force'
        WHEN kv_tokens IS NULL AND NOT block_size_given
            THEN blocks || ' blocks x block size 16 (the CUDA default: no block_size in the args dump)'
        WHEN kv_tokens IS NULL THEN blocks || ' blocks x block size ' || block_size
        WHEN role = 'both' THEN 'no kv_role (or kv_both): the node serves both roles'
    END AS note,
    false AS engine_warned
FROM engine_starts
WHERE source IN (SELECT path FROM inputs WHERE format = 'vllm')
    AND NOT failed AND start_ts IS NOT NULL AND tokens IS NOT NULL
