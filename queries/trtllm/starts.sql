-- TensorRT-LLM server starts, one row per KV cache creation of each node, from the trtllm_*
-- rows of engine_startup (docs/engine-logs.md, "TensorRT-LLM"). Every rank prints its own
-- lines, in time order. A rank's creation ends with its `max_seq_len=N, max_num_requests=...`
-- line (the PyTorch backend prints it once the executor and its KV cache are created); where
-- a log has no such line (the C++ executor), a pool line (primary-pool blocks, tokens per
-- block) after an allocation line of the same creation opens the next one. The n-th creations
-- of all ranks are one start. The PyTorch backend first creates a KV cache only to estimate
-- memory, then the final one (whose creation holds the `Estimated max memory in KV cache`
-- line): the estimation (`dry_run`) has no pool of its own, but its lines mark when the launch
-- began.
-- Its pool: the smallest `[MemUsageChange] Allocated ... paged KV cache (N)`, else the
-- smallest primary-pool blocks x tokens per block; its context limit: `Adjusted max_seq_len
-- to N`, else `max_seq_len=N`.
-- The figures that must agree (else `disagrees`, with the lines of the smallest and the
-- largest): every rank's allocation N and blocks x tokens per block (the ranks take the
-- smallest token count of all before they size the pool, and N is its blocks x tokens per
-- block). A quarantined line sizes nothing; a start none of whose pool lines could be read
-- has no pool (`quarantined` names them).
WITH ordered AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY node ORDER BY ts, source, source_row) AS k,
        kind = 'trtllm_seq_len' AND setup IS NULL AND reason IS NULL AS ends,
        kind IN ('trtllm_blocks', 'trtllm_window_blocks', 'trtllm_block_tokens') AND reason IS NULL
            AS opens
    FROM engine_startup
    WHERE starts_with(kind, 'trtllm_') AND ts IS NOT NULL
),
segmented AS (
    SELECT
        *,
        -- the end lines before it: its rank's creation, where the log prints them
        coalesce(sum(CASE WHEN ends THEN 1 ELSE 0 END) OVER (
            PARTITION BY node, coalesce(tags, '') ORDER BY k
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS seg
    FROM ordered
),
counted AS (
    SELECT
        *,
        coalesce(sum(CASE WHEN kind = 'trtllm_alloc' AND reason IS NULL THEN 1 ELSE 0 END) OVER (
            PARTITION BY node, coalesce(tags, ''), seg ORDER BY k
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS allocs_before
    FROM segmented
),
created AS (
    SELECT
        *,
        -- the allocation lines before the last pool line at or before it, in its segment
        coalesce(last_value(CASE WHEN opens THEN allocs_before END IGNORE NULLS) OVER (
            PARTITION BY node, coalesce(tags, ''), seg ORDER BY k
            ROWS UNBOUNDED PRECEDING), 0) AS sub
    FROM counted
),
numbered AS (
    SELECT
        *,
        -- the rank's n-th creation
        dense_rank() OVER (PARTITION BY node, coalesce(tags, '') ORDER BY seg, sub) AS start_no
    FROM created
),
per_rank AS (
    -- blocks x tokens per block of one rank's creation: the figure its allocation line states
    SELECT
        node, start_no, tags,
        min(blocks) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks')
            AND reason IS NULL) AS blocks,
        min(block_size) FILTER (WHERE kind IN ('trtllm_block_tokens', 'trtllm_window_blocks')
            AND reason IS NULL) AS block_tokens,
        arg_min(source, k) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks')
            AND reason IS NULL) AS source,
        arg_min(source_row, k) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks')
            AND reason IS NULL) AS source_row,
        min(k) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks')
            AND reason IS NULL) AS k
    FROM numbered
    GROUP BY node, start_no, tags
),
figures AS (
    SELECT
        node, start_no, k, source, source_row, tokens AS figure,
        'paged KV cache (' || tokens || ')' AS text
    FROM numbered
    WHERE kind = 'trtllm_alloc' AND reason IS NULL
    UNION ALL
    SELECT
        node, start_no, k, source, source_row, blocks * block_tokens,
        blocks || ' primary-pool blocks x ' || block_tokens || ' tokens per block'
    FROM per_rank
    WHERE blocks IS NOT NULL AND block_tokens IS NOT NULL
),
spread AS (
    -- the smallest and the largest figure, and the lines that hold them
    SELECT
        node, start_no, min(figure) AS smallest, max(figure) AS largest,
        arg_min({'text': text, 'source': source, 'row': source_row}, (figure, k)) AS lo,
        arg_max({'text': text, 'source': source, 'row': source_row}, (figure, -k)) AS hi
    FROM figures
    GROUP BY node, start_no
),
grouped AS (
    SELECT
        node,
        start_no,
        min(role) AS role,
        min(tokens) FILTER (WHERE kind = 'trtllm_alloc' AND reason IS NULL) AS alloc_tokens,
        min(blocks) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks')
            AND reason IS NULL) AS blocks,
        min(block_size) FILTER (WHERE kind IN ('trtllm_block_tokens', 'trtllm_window_blocks')
            AND reason IS NULL) AS block_tokens,
        -- the window sizes of its pools (one per size under variable sliding-window attention)
        string_agg(DISTINCT setup, ', ' ORDER BY setup) FILTER (
            WHERE kind = 'trtllm_window_blocks' AND reason IS NULL) AS windows,
        count(DISTINCT setup) FILTER (WHERE kind = 'trtllm_window_blocks' AND reason IS NULL)
            AS window_sizes,
        coalesce(
            min(context_len) FILTER (WHERE kind = 'trtllm_seq_len' AND setup = 'adjusted'),
            min(context_len) FILTER (WHERE kind = 'trtllm_seq_len')
        ) AS context_len,
        bool_or(kind = 'trtllm_estimated' AND reason IS NULL) AS estimated,
        min(ts) AS first_ts,
        coalesce(
            min(ts) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks', 'trtllm_block_tokens', 'trtllm_alloc')
                AND reason IS NULL),
            min(ts) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks', 'trtllm_block_tokens', 'trtllm_alloc'))
        ) AS start_ts,
        arg_min(source, (kind NOT IN ('trtllm_blocks', 'trtllm_window_blocks', 'trtllm_block_tokens', 'trtllm_alloc'),
            reason IS NOT NULL, k)) AS source,
        arg_min(source_row, (kind NOT IN ('trtllm_blocks', 'trtllm_window_blocks', 'trtllm_block_tokens', 'trtllm_alloc'),
            reason IS NOT NULL, k)) AS source_row,
        arg_min(source, k) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks',
            'trtllm_block_tokens', 'trtllm_alloc') AND reason IS NOT NULL) AS cut_source,
        arg_min(source_row, k) FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks',
            'trtllm_block_tokens', 'trtllm_alloc') AND reason IS NOT NULL) AS cut_row,
        string_agg(source || ':' || source_row || ' (' || reason || ')', '; ' ORDER BY k)
            FILTER (WHERE kind IN ('trtllm_blocks', 'trtllm_window_blocks', 'trtllm_block_tokens', 'trtllm_alloc')
                AND reason IS NOT NULL) AS quarantined
    FROM numbered
    GROUP BY node, start_no
),
marked AS (
    SELECT
        *,
        -- the next creation holds the estimation's end: this one was the estimation
        coalesce(lead(estimated) OVER (PARTITION BY node ORDER BY start_no), false) AS dry_run
    FROM grouped
)
SELECT
    m.node,
    m.start_no,
    m.role,
    CASE WHEN NOT m.dry_run AND m.window_sizes <= 1
        THEN coalesce(s.smallest, m.blocks * m.block_tokens) END AS tokens,
    m.context_len,
    m.alloc_tokens,
    m.blocks,
    m.block_tokens,
    m.dry_run,
    m.first_ts,
    m.start_ts,
    -- where the node's next creation begins (an estimation-only one too)
    lead(m.first_ts) OVER (PARTITION BY m.node ORDER BY m.first_ts, m.start_no) AS next_ts,
    -- a start without a pool is known by its first quarantined pool line
    CASE WHEN s.smallest IS NULL AND m.quarantined IS NOT NULL THEN m.cut_source
         ELSE m.source END AS source,
    CASE WHEN s.smallest IS NULL AND m.quarantined IS NOT NULL THEN m.cut_row
         ELSE m.source_row END AS source_row,
    CASE WHEN NOT m.dry_run THEN m.quarantined END AS quarantined,
    CASE WHEN NOT m.dry_run AND m.window_sizes > 1
        THEN 'its KV cache has one pool per attention window size (variable sliding-window '
            || 'attention: ' || m.windows || '), which no one [[capacity]] entry can state'
    END AS unproven,
    coalesce(s.smallest <> s.largest, false) AND NOT m.dry_run AND m.window_sizes <= 1
        AS disagrees,
    s.lo.text AS lo_text, s.lo.source AS lo_source, s.lo['row'] AS lo_row,
    s.hi.text AS hi_text, s.hi.source AS hi_source, s.hi['row'] AS hi_row,
    false AS below_page
FROM marked AS m
LEFT JOIN spread AS s ON s.node = m.node AND s.start_no = m.start_no
