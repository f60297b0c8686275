-- One capacity span per server start, from engine_startup (and the node's admission lines in
-- engine_aborts).
-- A start opens at a server_args line (printed once per launch), at the node's first startup
-- line, or at a startup line after the node's max_total_num_tokens line (that line closes a
-- start's startup: one per start, or one per pipeline stage, so a repeat from the same rank
-- opens a new start). So the second allocation line a rank logs in one start (a speculative
-- draft's pool, the other pool of a hybrid model) never opens a span of its own.
-- tokens: the start's max_total_num_tokens (the full pool, after post-capture resizing),
-- else its `Full` pool, else its post-capture allocation, else the full size of its
-- sliding-window pool lines, else the smallest first plain allocation of a rank.
-- `KV Cache VA upper bound` and draft allocations never give the capacity.
-- reject_from: the smallest prompt the scheduler refuses. The limit the engine itself printed
-- in this span (`... exceeds the maximum allowed length (M tokens)` or the auto-truncate
-- warning's max_req_input_len=M), else min(context_len - 1, tokens - 1) - 5 (SGLang's
-- max_req_input_len, the same in 0.4.10 .. 0.5.23) for a plain pool. Hybrid sliding-window
-- pools, decode context parallelism, KV sharding, HiSparse and dLLM compute it from other
-- figures: then NULL, and `note` says why.
-- start_ts: the start's first allocation line (else its first capacity line); end_ts: the
-- node's next start.
WITH ordered AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY node ORDER BY ts, source, source_row) AS k
    FROM engine_startup
),
marked AS (
    SELECT
        *,
        lag(kind) OVER (PARTITION BY node ORDER BY k) AS prev_kind,
        lag(tags) OVER (PARTITION BY node ORDER BY k) AS prev_tags
    FROM ordered
),
started AS (
    SELECT
        *,
        sum(
            CASE
                WHEN prev_kind IS NULL OR kind = 'server_args' THEN 1
                WHEN prev_kind = 'pool' AND kind <> 'pool' THEN 1
                WHEN prev_kind = 'pool' AND kind = 'pool' AND tags IS NOT DISTINCT FROM prev_tags
                    THEN 1
                ELSE 0
            END
        ) OVER (PARTITION BY node ORDER BY k ROWS UNBOUNDED PRECEDING) AS start_no
    FROM marked
),
firsts AS (
    -- each rank's first allocation of each pool kind in a start (a draft's is its second)
    SELECT
        *,
        row_number() OVER (
            PARTITION BY node, start_no, kind, pool, coalesce(tags, '') ORDER BY k
        ) AS occ
    FROM started
),
starts AS (
    SELECT
        node,
        start_no,
        min(role) AS role,
        min(tokens) FILTER (WHERE kind = 'pool') AS pool_tokens,
        max(context_len) FILTER (WHERE kind = 'pool') AS context_len,
        min(tokens) FILTER (WHERE kind = 'kv_alloc' AND pool = 'full') AS full_tokens,
        min(tokens) FILTER (WHERE kind = 'kv_alloc' AND pool = 'post_capture') AS post_tokens,
        min(tokens) FILTER (WHERE kind = 'swa_pool') AS swa_full_tokens,
        min(tokens) FILTER (WHERE kind = 'kv_alloc' AND pool = 'main' AND occ = 1) AS main_tokens,
        bool_or(kind = 'swa_pool' OR (kind = 'kv_alloc' AND pool IN ('full', 'swa'))) AS hybrid,
        max(setup) FILTER (WHERE kind = 'server_args') AS setup,
        bool_or(kind = 'engine_preflight') AS engine_warned,
        coalesce(
            min(ts) FILTER (WHERE kind = 'kv_alloc'),
            min(ts) FILTER (WHERE kind <> 'server_args')
        ) AS start_ts,
        arg_min(source, (kind <> 'kv_alloc', kind = 'server_args', k)) AS source,
        arg_min(source_row, (kind <> 'kv_alloc', kind = 'server_args', k)) AS source_row
    FROM firsts
    GROUP BY node, start_no
),
spans AS (
    SELECT
        node,
        role,
        CASE WHEN hybrid THEN coalesce(pool_tokens, full_tokens, post_tokens, swa_full_tokens)
             ELSE coalesce(pool_tokens, full_tokens, post_tokens, main_tokens) END AS tokens,
        context_len,
        hybrid,
        setup,
        engine_warned,
        start_ts,
        lead(start_ts) OVER (PARTITION BY node ORDER BY start_ts, source, source_row) AS end_ts,
        source,
        source_row
    FROM starts
    WHERE start_ts IS NOT NULL
),
kept AS (
    SELECT * FROM spans WHERE tokens IS NOT NULL
),
observed AS (
    -- the limit the scheduler printed while the span was in force
    SELECT s.node, s.start_ts, min(a.max_tokens) AS limit_min, max(a.max_tokens) AS limit_max
    FROM kept AS s
    JOIN engine_aborts AS a
      ON a.node = s.node
     AND a.kind IN ('input_length', 'truncated')
     AND a.max_tokens IS NOT NULL
     AND a.ts >= s.start_ts
     AND (s.end_ts IS NULL OR a.ts < s.end_ts)
    GROUP BY s.node, s.start_ts
),
derived AS (
    SELECT
        s.*,
        o.limit_min,
        o.limit_max,
        CASE
            WHEN s.context_len IS NULL OR s.hybrid OR coalesce(s.setup, '') <> '' THEN NULL
            ELSE least(s.context_len - 1, s.tokens - 1) - 5
        END AS formula
    FROM kept AS s
    LEFT JOIN observed AS o ON o.node = s.node AND o.start_ts = s.start_ts
)
SELECT
    node,
    role,
    tokens,
    context_len,
    coalesce(limit_min, formula) AS reject_from,
    CASE
        WHEN limit_min IS NOT NULL AND limit_max <> limit_min
            THEN 'the engine printed different limits in this span (' || limit_min || ' .. '
                || limit_max || '): the smallest is kept'
        WHEN limit_min IS NOT NULL AND formula IS NOT NULL AND formula <> limit_min
            THEN 'the engine printed ' || limit_min || '; min(context_len - 1, tokens - 1) - 5 gives '
                || formula || ': the engine''s figure is kept'
        WHEN limit_min IS NOT NULL AND formula IS NULL
            THEN 'from the maximum allowed length the engine printed (not derivable here: '
                || CASE WHEN hybrid THEN 'hybrid sliding-window pool'
                        WHEN coalesce(setup, '') <> '' THEN setup
                        ELSE 'no context_len' END || ')'
        WHEN limit_min IS NOT NULL THEN NULL
        WHEN hybrid
            THEN 'hybrid sliding-window pool: SGLang sizes its admission limit from the pools '
                || 'by version, so reject_from is not derived; read it from an "exceeds the '
                || 'maximum allowed length (M tokens)" line (reject_from = M)'
        WHEN coalesce(setup, '') <> ''
            THEN 'server_args ' || setup || ': the admission limit is not min(context_len - 1, '
                || 'tokens - 1) - 5 here, so reject_from is not derived; read it from an "exceeds '
                || 'the maximum allowed length (M tokens)" line (reject_from = M)'
        WHEN context_len IS NULL
            THEN 'no max_total_num_tokens line (context_len unknown): reject_from not derived'
        WHEN setup IS NULL
            THEN 'no server_args line for this start: a plain pool is assumed'
    END AS note,
    coalesce(engine_warned, false) AS engine_warned,
    start_ts,
    end_ts,
    source,
    source_row
FROM derived
