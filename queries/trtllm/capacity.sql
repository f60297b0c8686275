-- TensorRT-LLM capacity spans, from the trtllm_* rows of engine_startup. Every rank prints
-- its own pool lines: a rank's n-th `Number of blocks in KV cache primary pool` line belongs
-- to the node's n-th start, and each other line to its rank's latest start. A start's pool:
-- the smallest `[MemUsageChange] Allocated ... paged KV cache (N)`, else the smallest
-- primary-pool blocks x tokens per block; its context limit: `Adjusted max_seq_len to N`,
-- else `max_seq_len=N`. A span starts at its first pool line and ends where the node's next
-- start begins.
WITH rows AS (
    SELECT * FROM engine_startup WHERE starts_with(kind, 'trtllm_')
),
ordered AS (
    SELECT
        *,
        sum(CASE WHEN kind = 'trtllm_blocks' THEN 1 ELSE 0 END) OVER (
            PARTITION BY node, coalesce(tags, '') ORDER BY ts, source, source_row
            ROWS UNBOUNDED PRECEDING) AS start_no
    FROM rows
),
starts AS (
    SELECT
        node,
        greatest(start_no, 1) AS start_no,
        min(role) AS role,
        min(tokens) FILTER (WHERE kind = 'trtllm_alloc') AS alloc_tokens,
        min(blocks) FILTER (WHERE kind = 'trtllm_blocks') AS blocks,
        min(block_size) FILTER (WHERE kind = 'trtllm_block_tokens') AS block_tokens,
        coalesce(
            min(context_len) FILTER (WHERE kind = 'trtllm_seq_len' AND setup = 'adjusted'),
            min(context_len) FILTER (WHERE kind = 'trtllm_seq_len')
        ) AS context_len,
        min(ts) AS start_ts,
        arg_min(source, (ts, source_row)) AS source,
        arg_min(source_row, (ts, source_row)) AS source_row
    FROM ordered
    GROUP BY node, greatest(start_no, 1)
)
SELECT
    node,
    role,
    coalesce(alloc_tokens, blocks * block_tokens) AS tokens,
    context_len,
    CAST(NULL AS BIGINT) AS reject_from,
    CASE WHEN alloc_tokens IS NULL THEN blocks || ' blocks x ' || block_tokens || ' tokens per block' END
        AS note,
    false AS engine_warned,
    start_ts,
    lead(start_ts) OVER (PARTITION BY node ORDER BY start_ts) AS end_ts,
    source,
    source_row
FROM starts
WHERE coalesce(alloc_tokens, blocks * block_tokens) IS NOT NULL
