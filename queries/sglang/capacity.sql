-- One capacity span per SGLang server start (engine_starts, from sglang/starts.sql: which
-- lines make a start, and its figures), with the node's admission lines in engine_aborts.
-- tokens: the start's max_total_num_tokens (the full pool, after post-capture resizing),
-- else its `Full` pool, else its post-capture allocation, else the full size of its
-- sliding-window pool lines, else the smallest first plain allocation of a rank; where those
-- of one pool disagree, the smallest (and `note` names both lines; `forensics capacity`
-- refuses such a start).
-- `KV Cache VA upper bound` and draft allocations never give the capacity.
-- reject_from: the smallest prompt the scheduler refuses. The limit the engine itself printed
-- in this span (`... exceeds the maximum allowed length (M tokens)` or the auto-truncate
-- warning's max_req_input_len=M), else min(context_len - 1, tokens - 1) - 5 (SGLang's
-- max_req_input_len, the same in 0.4.10 .. 0.5.23) for a plain pool. Hybrid sliding-window
-- pools, decode context parallelism, KV sharding, HiSparse and dLLM compute it from other
-- figures: then NULL, and `note` says why; so does a start whose server_args or
-- max_total_num_tokens line was quarantined.
-- start_ts: the start's first allocation line (else its first capacity line); end_ts: the
-- node's next start, a start none of whose capacity lines could be read included (it has no
-- span of its own: engine_faults names it).
WITH spans AS (
    SELECT
        *,
        lead(start_ts) OVER (PARTITION BY node ORDER BY start_ts, source, source_row) AS end_ts
    FROM engine_starts
    WHERE start_ts IS NOT NULL
      -- the starts of the logs read as SGLang's (other engines' are in engine_starts too)
      AND source IN (SELECT path FROM inputs WHERE format = 'sglang')
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
            WHEN s.context_len IS NULL OR s.hybrid OR coalesce(s.setup, '') <> ''
                OR s.args_cut IS NOT NULL THEN NULL
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
    start_ts,
    end_ts,
    source,
    source_row,
    coalesce(limit_min, formula) AS reject_from,
    CASE
        WHEN disagrees
            THEN _disagreement_note(lo_text, lo_source, lo_row, hi_text, hi_source, hi_row)
        WHEN below_page
            THEN 'a pool of ' || tokens || ' tokens is smaller than one page (page_size='
                || page_size || ', ' || args_source || ':' || args_row || '): SGLang sizes its '
                || 'pool in whole pages, so forensics capacity refuses this start'
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
                        WHEN args_cut IS NOT NULL THEN 'its server_args line was quarantined'
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
        WHEN args_cut IS NOT NULL
            THEN 'its server_args line was quarantined, ' || args_cut || ': the setup is unknown, '
                || 'so reject_from is not derived; read it from an "exceeds the maximum allowed '
                || 'length (M tokens)" line (reject_from = M)'
        WHEN pool_cut IS NOT NULL AND context_len IS NULL
            THEN 'its max_total_num_tokens line was quarantined, ' || pool_cut || ': the pool is '
                || 'from its allocation lines; context_len unknown, so reject_from is not derived '
                || '(SGLang refuses from min(context_len - 1, tokens - 1) - 5)'
        WHEN context_len IS NULL
            THEN 'no max_total_num_tokens line (context_len unknown): reject_from not derived'
        WHEN setup IS NULL
            THEN 'no server_args line for this start: a plain pool is assumed'
    END AS note,
    coalesce(engine_warned, false) AS engine_warned
FROM derived
