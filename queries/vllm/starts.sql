-- vLLM server starts, one row per start of each node, from the vllm_* rows of engine_startup
-- (docs/engine-logs.md, "vLLM" and "Faults in the logs"). Lines are taken in time order.
-- A start opens at an args dump (`args: Namespace(...)` / `non-default args: {...}`, printed
-- once per launch; a quarantined one too: its time and kind are whole) or at a node's first
-- startup line. Its pool: the smallest `KV cache size: N tokens` of the start (0.8 - 0.11
-- print one line per tensor-parallel worker before the scheduler takes the smallest;
-- data-parallel ranks each print theirs), else the smallest `# <device> blocks: N` times the
-- block size (the args dump's block_size, else 16, the CUDA default). Its context limit:
-- `Using max model len N`, else the engine config line's max_seq_len, else the args'
-- max_model_len. A failed start (`EngineCore failed to start`, the estimated maximum model
-- length message) has no pool.
-- The figures that must agree (else `disagrees`, with the lines of the smallest and the
-- largest): every block-count line of a start (vLLM prints it once per start, after the
-- smallest of its workers), and from 0.12 (the engine config line's version) the
-- `KV cache size` lines of one process (one engine core prints one per start).
-- A start with a quarantined pool line has no pool (`tokens` NULL): a quarantined line never
-- sizes a span, and the smallest pool, which vLLM keeps, may have been on it (`unproven`
-- says so when other pool lines of the start were read).
WITH ordered AS (
    SELECT *, row_number() OVER (PARTITION BY node ORDER BY ts, source, source_row) AS k
    FROM engine_startup
    WHERE starts_with(kind, 'vllm_') AND ts IS NOT NULL
),
started AS (
    SELECT
        *,
        sum(CASE WHEN k = 1 OR kind = 'vllm_args' THEN 1 ELSE 0 END)
            OVER (PARTITION BY node ORDER BY k ROWS UNBOUNDED PRECEDING) AS start_no
    FROM ordered
),
versioned AS (
    SELECT
        *,
        max(
            try_cast(regexp_extract(setup, '^v?(\d+)\.(\d+)', 1) AS INTEGER) * 1000
            + try_cast(regexp_extract(setup, '^v?(\d+)\.(\d+)', 2) AS INTEGER)
        ) FILTER (WHERE kind = 'vllm_engine_config' AND reason IS NULL)
            OVER (PARTITION BY node, start_no) AS version_no
    FROM started
),
compared AS (
    -- the pool lines that must agree, by group
    SELECT
        *,
        CASE
            WHEN kind = 'vllm_blocks' THEN 'blocks'
            WHEN kind = 'vllm_kv_tokens' AND version_no >= 12 THEN 'process ' || coalesce(tags, '')
        END AS agree,
        CASE kind
            WHEN 'vllm_blocks' THEN '# ' || pool || ' blocks: ' || blocks
            ELSE pool || ' KV cache size: ' || tokens || ' tokens'
        END AS text,
        coalesce(tokens, blocks) AS figure
    FROM versioned
    WHERE kind IN ('vllm_blocks', 'vllm_kv_tokens') AND reason IS NULL
),
spread AS (
    -- the lines of the smallest and the largest figure of each group
    SELECT
        node, start_no, agree,
        min(figure) <> max(figure) AS disagrees,
        arg_min({'text': text, 'source': source, 'row': source_row}, (figure, k)) AS lo,
        arg_max({'text': text, 'source': source, 'row': source_row}, (figure, -k)) AS hi
    FROM compared
    WHERE agree IS NOT NULL
    GROUP BY node, start_no, agree
),
disagreeing AS (
    SELECT node, start_no, arg_min(lo, agree) AS lo, arg_min(hi, agree) AS hi
    FROM spread
    WHERE disagrees
    GROUP BY node, start_no
),
grouped AS (
    SELECT
        node,
        start_no,
        coalesce(min(role) FILTER (WHERE kind = 'vllm_args'), min(role)) AS role,
        coalesce(max(block_size) FILTER (WHERE kind = 'vllm_args'), 16) AS block_size,
        bool_or(kind = 'vllm_args' AND block_size IS NOT NULL) AS block_size_given,
        min(tokens) FILTER (WHERE kind = 'vllm_kv_tokens' AND reason IS NULL) AS kv_tokens,
        max(tokens) FILTER (WHERE kind = 'vllm_kv_tokens' AND reason IS NULL) AS kv_tokens_max,
        count(DISTINCT tokens) FILTER (WHERE kind = 'vllm_kv_tokens' AND reason IS NULL)
            AS kv_values,
        min(blocks) FILTER (WHERE kind = 'vllm_blocks' AND reason IS NULL) AS blocks,
        coalesce(
            max(context_len) FILTER (WHERE kind = 'vllm_max_model_len'),
            max(context_len) FILTER (WHERE kind = 'vllm_engine_config'),
            max(context_len) FILTER (WHERE kind = 'vllm_args')
        ) AS context_len,
        coalesce(bool_or(kind = 'vllm_failed' AND reason IS NULL), false) AS failed,
        min(ts) AS first_ts,
        coalesce(
            min(ts) FILTER (WHERE kind IN ('vllm_kv_tokens', 'vllm_blocks') AND reason IS NULL),
            min(ts) FILTER (WHERE kind IN ('vllm_kv_tokens', 'vllm_blocks'))
        ) AS start_ts,
        -- the line a start is known by: its first usable pool line, else its first
        -- quarantined pool line, else its first line
        arg_min(source, (kind NOT IN ('vllm_kv_tokens', 'vllm_blocks'), reason IS NOT NULL, k))
            AS source,
        arg_min(source_row, (kind NOT IN ('vllm_kv_tokens', 'vllm_blocks'), reason IS NOT NULL, k))
            AS source_row,
        bool_or(kind IN ('vllm_kv_tokens', 'vllm_blocks') AND reason IS NULL) AS pool_read,
        arg_min(source, k) FILTER (
            WHERE kind IN ('vllm_kv_tokens', 'vllm_blocks') AND reason IS NOT NULL) AS cut_source,
        arg_min(source_row, k) FILTER (
            WHERE kind IN ('vllm_kv_tokens', 'vllm_blocks') AND reason IS NOT NULL) AS cut_row,
        string_agg(source || ':' || source_row || ' (' || reason || ')', '; ' ORDER BY k)
            FILTER (WHERE kind IN ('vllm_kv_tokens', 'vllm_blocks') AND reason IS NOT NULL)
            AS quarantined
    FROM started
    GROUP BY node, start_no
)
SELECT
    g.node,
    g.start_no,
    g.role,
    CASE
        WHEN g.failed OR g.quarantined IS NOT NULL THEN NULL
        ELSE coalesce(g.kv_tokens, g.blocks * g.block_size)
    END AS tokens,
    g.context_len,
    g.block_size,
    g.block_size_given,
    g.kv_tokens,
    g.kv_tokens_max,
    g.kv_values,
    g.blocks,
    g.failed,
    g.first_ts,
    g.start_ts,
    -- where the node's next start begins (a failed one, or one without a readable pool, too)
    lead(g.first_ts) OVER (PARTITION BY g.node ORDER BY g.first_ts, g.start_no) AS next_ts,
    -- a start with a quarantined pool line is known by that line
    CASE WHEN g.quarantined IS NOT NULL THEN g.cut_source ELSE g.source END AS source,
    CASE WHEN g.quarantined IS NOT NULL THEN g.cut_row ELSE g.source_row END AS source_row,
    -- a failed start has no capacity to miss: vLLM itself says it did not start
    CASE WHEN NOT g.failed THEN g.quarantined END AS quarantined,
    CASE WHEN g.quarantined IS NOT NULL AND g.pool_read AND NOT g.failed
        THEN 'a pool line of this start was quarantined while others were read, and vLLM '
            || 'keeps the smallest of them: the cut one may have held it'
    END AS unproven,
    d.lo IS NOT NULL AS disagrees,
    d.lo.text AS lo_text, d.lo.source AS lo_source, d.lo['row'] AS lo_row,
    d.hi.text AS hi_text, d.hi.source AS hi_source, d.hi['row'] AS hi_row,
    false AS below_page
FROM grouped AS g
LEFT JOIN disagreeing AS d ON d.node = g.node AND d.start_no = g.start_no
