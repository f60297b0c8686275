-- vLLM capacity spans, from the vllm_* rows of engine_startup (docs/engine-logs.md, "vLLM").
-- A start opens at an args dump (`args: Namespace(...)` / `non-default args: {...}`, printed
-- once per launch) or at a node's first startup line. Its pool: the smallest
-- `KV cache size: N tokens` of the start (0.8 - 0.11 print one line per tensor-parallel
-- worker before the scheduler takes the smallest; data-parallel ranks each print theirs),
-- else the smallest `# <device> blocks: N` times the block size (the args dump's
-- block_size, else 16, the CUDA default). Its context limit: `Using max model len N`, else
-- the engine config line's max_seq_len, else the args' max_model_len. A start that failed
-- (`EngineCore failed to start`, the estimated maximum model length message) or printed no
-- pool has no span. A span starts at its first pool line and ends where the node's next
-- start begins. role both (kv_both, or no kv_transfer_config) gives a span per role.
WITH rows AS (
    SELECT * FROM engine_startup WHERE starts_with(kind, 'vllm_')
),
ordered AS (
    SELECT *, row_number() OVER (PARTITION BY node ORDER BY ts, source, source_row) AS k
    FROM rows
),
started AS (
    SELECT
        *,
        sum(CASE WHEN k = 1 OR kind = 'vllm_args' THEN 1 ELSE 0 END)
            OVER (PARTITION BY node ORDER BY k ROWS UNBOUNDED PRECEDING) AS start_no
    FROM ordered
),
starts AS (
    SELECT
        node,
        start_no,
        coalesce(min(role) FILTER (WHERE kind = 'vllm_args'), min(role)) AS role,
        coalesce(max(block_size) FILTER (WHERE kind = 'vllm_args'), 16) AS block_size,
        bool_or(kind = 'vllm_args' AND block_size IS NOT NULL) AS block_size_given,
        min(tokens) FILTER (WHERE kind = 'vllm_kv_tokens') AS kv_tokens,
        max(tokens) FILTER (WHERE kind = 'vllm_kv_tokens') AS kv_tokens_max,
        count(DISTINCT tokens) FILTER (WHERE kind = 'vllm_kv_tokens') AS kv_values,
        min(blocks) FILTER (WHERE kind = 'vllm_blocks') AS blocks,
        coalesce(
            max(context_len) FILTER (WHERE kind = 'vllm_max_model_len'),
            max(context_len) FILTER (WHERE kind = 'vllm_engine_config'),
            max(context_len) FILTER (WHERE kind = 'vllm_args')
        ) AS context_len,
        bool_or(kind = 'vllm_failed') AS failed,
        min(ts) AS first_ts,
        min(ts) FILTER (WHERE kind IN ('vllm_kv_tokens', 'vllm_blocks')) AS start_ts,
        arg_min(source, (kind NOT IN ('vllm_kv_tokens', 'vllm_blocks'), k)) AS source,
        arg_min(source_row, (kind NOT IN ('vllm_kv_tokens', 'vllm_blocks'), k)) AS source_row
    FROM started
    GROUP BY node, start_no
),
spans AS (
    SELECT
        *,
        lead(first_ts) OVER (PARTITION BY node ORDER BY first_ts, start_no) AS end_ts,
        coalesce(kv_tokens, blocks * block_size) AS tokens
    FROM starts
),
kept AS (
    SELECT * FROM spans WHERE NOT failed AND start_ts IS NOT NULL
)
SELECT
    node,
    unnest(CASE WHEN role = 'both' THEN ['prefill', 'decode'] ELSE [role] END) AS role,
    tokens,
    context_len,
    CAST(NULL AS BIGINT) AS reject_from,
    CASE
        WHEN kv_values > 1
            THEN 'the workers printed different pools (' || kv_tokens || ' .. ' || kv_tokens_max
                || ' tokens): the smallest is in force'
        WHEN kv_tokens IS NULL AND NOT block_size_given
            THEN blocks || ' blocks x block size 16 (the CUDA default: no block_size in the args dump)'
        WHEN kv_tokens IS NULL THEN blocks || ' blocks x block size ' || block_size
        WHEN role = 'both' THEN 'no kv_role (or kv_both): the node serves both roles'
    END AS note,
    false AS engine_warned,
    start_ts,
    end_ts,
    source,
    source_row
FROM kept
