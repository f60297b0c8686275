-- TensorRT-LLM capacity spans: one per start with a pool (engine_starts rows of the logs
-- read as TensorRT-LLM's, `inputs.format`; an estimation-only KV cache has none), from its
-- first pool line to where the node's next creation begins.
WITH mine AS (
    SELECT *
    FROM engine_starts
    WHERE source IN (SELECT path FROM inputs WHERE format = 'trtllm')
),
spans AS (
    SELECT
        *,
        lead(first_ts) OVER (PARTITION BY node ORDER BY first_ts, start_no) AS end_ts
    FROM mine
)
SELECT
    node,
    role,
    tokens,
    context_len,
    start_ts,
    end_ts,
    source,
    source_row,
    CAST(NULL AS BIGINT) AS reject_from,
    CASE
        WHEN disagrees
            THEN 'the capacity lines of this start disagree: ' || lo_text || ' (' || lo_source
                || ':' || lo_row || ') and ' || hi_text || ' (' || hi_source || ':' || hi_row
                || '); the smaller is kept here, but forensics capacity refuses this start'
        WHEN alloc_tokens IS NULL THEN blocks || ' blocks x ' || block_tokens || ' tokens per block'
    END AS note,
    false AS engine_warned
FROM spans
WHERE NOT dry_run AND start_ts IS NOT NULL AND tokens IS NOT NULL
