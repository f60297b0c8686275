-- TensorRT-LLM capacity spans: one per start with a pool (engine_starts rows of the logs
-- read as TensorRT-LLM's, `inputs.format`; an estimation-only KV cache has none), from its
-- first pool line to where the node's next creation begins.
SELECT
    node,
    role,
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
        WHEN alloc_tokens IS NULL THEN blocks || ' blocks x ' || block_tokens || ' tokens per block'
    END AS note,
    false AS engine_warned
FROM engine_starts
WHERE source IN (SELECT path FROM inputs WHERE format = 'trtllm')
    AND NOT dry_run AND start_ts IS NOT NULL AND tokens IS NOT NULL
