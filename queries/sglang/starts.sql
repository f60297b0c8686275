-- One row per SGLang server start of each node, from engine_startup: the span rules
-- (docs/engine-logs.md, "Server starts"). Lines are taken in time order (ts, then source and
-- line), never in file order.
-- 1. A server_args line opens a new launch: SGLang's launching process prints it once per
--    launch, before it starts one scheduler process per rank (a cut server_args line too: its
--    time and kind are whole; the setup it held is then unknown).
-- 2. Within a launch, the lines of every rank belong to one start whatever their order: the
--    ranks are separate processes writing to one log. Each rank logs its pool lines, then rank
--    0 of each pipeline stage its max_total_num_tokens line, which closes that rank's startup;
--    a later startup line of the same rank (same rank tags) is a restart without a
--    server_args line: a new start. A line of another rank belongs to the newest start.
-- 3. A quarantined line opens and closes nothing and gives no figure (one malformed line never
--    moves a span); it is named in its start's note, and places a start none of whose capacity
--    lines could be read (such a start gets no capacity, and ends the span before it).
-- Per start: the figures of its usable lines (pool: max_total_num_tokens; full / post / swa /
-- main: the allocation lines, each rank's first `main` one only, as a speculative draft's
-- pool is its second), the lines that disagree, the page size, the quarantined lines.
WITH ordered AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY node ORDER BY ts, source, source_row) AS k
    FROM engine_startup
    -- SGLang's startup kinds only (other engines' readers write theirs into this table too)
    WHERE ts IS NOT NULL
      AND kind IN ('server_args', 'kv_alloc', 'swa_pool', 'pool', 'engine_preflight')
),
launched AS (
    SELECT
        *,
        sum(CASE WHEN kind = 'server_args' THEN 1 ELSE 0 END) OVER (
            PARTITION BY node ORDER BY k ROWS UNBOUNDED PRECEDING
        ) AS launch
    FROM ordered
),
ranked AS (
    SELECT
        *,
        -- the max_total_num_tokens lines this line's rank logged before it in this launch
        coalesce(sum(CASE WHEN kind = 'pool' AND reason IS NULL THEN 1 ELSE 0 END) OVER (
            PARTITION BY node, launch, tags ORDER BY k
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS closed
    FROM launched
),
started AS (
    SELECT
        *,
        max(CASE WHEN reason IS NULL THEN closed ELSE 0 END) OVER (
            PARTITION BY node, launch ORDER BY k ROWS UNBOUNDED PRECEDING
        ) AS restart
    FROM ranked
),
numbered AS (
    SELECT
        *,
        dense_rank() OVER (PARTITION BY node ORDER BY launch, restart) AS start_no,
        -- each rank's first allocation of each pool kind in a start (a draft's is its second)
        row_number() OVER (
            PARTITION BY node, launch, restart, kind, pool, coalesce(tags, ''), reason IS NULL
            ORDER BY k
        ) AS occ
    FROM started
),
figured AS (
    SELECT
        *,
        CASE
            WHEN reason IS NOT NULL THEN NULL
            WHEN kind = 'pool' THEN 'pool'
            WHEN kind = 'kv_alloc' AND pool = 'full' THEN 'full'
            WHEN kind = 'kv_alloc' AND pool = 'post_capture' THEN 'post'
            WHEN kind = 'kv_alloc' AND pool = 'main' AND occ = 1 THEN 'main'
            WHEN kind = 'swa_pool' THEN 'swa'
        END AS figure
    FROM numbered
),
grouped AS (
    SELECT
        node,
        start_no,
        min(role) AS role,
        min(tokens) FILTER (WHERE figure = 'pool') AS pool_tokens,
        max(context_len) FILTER (WHERE figure = 'pool') AS context_len,
        min(tokens) FILTER (WHERE figure = 'full') AS full_tokens,
        min(tokens) FILTER (WHERE figure = 'post') AS post_tokens,
        min(tokens) FILTER (WHERE figure = 'swa') AS swa_full_tokens,
        min(tokens) FILTER (WHERE figure = 'main') AS main_tokens,
        bool_or(reason IS NULL AND (kind = 'swa_pool' OR (kind = 'kv_alloc' AND pool IN ('full', 'swa'))))
            AS hybrid,
        max(setup) FILTER (WHERE kind = 'server_args' AND reason IS NULL) AS setup,
        arg_min(source || ':' || source_row || ' (' || reason || ')', k)
            FILTER (WHERE kind = 'server_args' AND reason IS NOT NULL) AS args_cut,
        max(page_size) FILTER (WHERE kind = 'server_args' AND reason IS NULL) AS page_size,
        arg_min(source, k) FILTER (WHERE kind = 'server_args' AND reason IS NULL) AS args_source,
        arg_min(source_row, k) FILTER (WHERE kind = 'server_args' AND reason IS NULL) AS args_row,
        bool_or(kind = 'engine_preflight' AND reason IS NULL) AS engine_warned,
        coalesce(
            min(ts) FILTER (WHERE kind = 'kv_alloc' AND reason IS NULL),
            min(ts) FILTER (WHERE kind <> 'server_args' AND reason IS NULL),
            min(ts) FILTER (WHERE kind <> 'server_args')
        ) AS start_ts,
        -- the line a start is known by: its first usable allocation line, else its first
        -- usable startup line, else its first quarantined one
        arg_min(source, (kind = 'server_args', reason IS NOT NULL, kind <> 'kv_alloc', k))
            AS source,
        arg_min(source_row, (kind = 'server_args', reason IS NOT NULL, kind <> 'kv_alloc', k))
            AS source_row,
        arg_min(source || ':' || source_row || ' (' || reason || ')', k)
            FILTER (WHERE kind = 'pool' AND reason IS NOT NULL) AS pool_cut,
        string_agg(
            source || ':' || source_row || ' (' || reason || ')', '; ' ORDER BY k
        ) FILTER (WHERE reason IS NOT NULL) AS quarantined
    FROM figured
    GROUP BY node, start_no
),
-- the figures that must agree: max_total_num_tokens and the allocation lines that hold the
-- same pool (a plain pool: post-capture sizing, else each rank's first allocation; a hybrid
-- one: the Full pool, else post-capture sizing). Setups whose pool SGLang sizes otherwise
-- (decode context parallelism, KV sharding, HiSparse, dLLM) are not compared.
compared AS (
    SELECT f.node, f.start_no, f.k, f.tokens, f.source, f.source_row, f.figure
    FROM figured AS f
    JOIN grouped AS g ON g.node = f.node AND g.start_no = f.start_no
    WHERE coalesce(g.setup, '') = ''
      AND (
          f.figure = 'pool'
          OR (NOT coalesce(g.hybrid, false) AND g.post_tokens IS NOT NULL AND f.figure = 'post')
          OR (NOT coalesce(g.hybrid, false) AND g.post_tokens IS NULL AND f.figure = 'main')
          OR (coalesce(g.hybrid, false) AND g.full_tokens IS NOT NULL AND f.figure = 'full')
          OR (coalesce(g.hybrid, false) AND g.full_tokens IS NULL AND f.figure = 'post')
      )
),
spread AS (
    SELECT
        node,
        start_no,
        min(tokens) AS lo,
        max(tokens) AS hi,
        arg_min(
            CASE figure WHEN 'pool' THEN 'max_total_num_tokens=' ELSE '#tokens: ' END || tokens,
            (tokens, k)
        ) AS lo_text,
        arg_min(source, (tokens, k)) AS lo_source,
        arg_min(source_row, (tokens, k)) AS lo_row,
        arg_max(
            CASE figure WHEN 'pool' THEN 'max_total_num_tokens=' ELSE '#tokens: ' END || tokens,
            (tokens, -k)
        ) AS hi_text,
        arg_max(source, (tokens, -k)) AS hi_source,
        arg_max(source_row, (tokens, -k)) AS hi_row
    FROM compared
    GROUP BY node, start_no
),
joined AS (
SELECT
    g.node,
    g.start_no,
    g.role,
    CASE
        WHEN s.lo <> s.hi THEN s.lo
        WHEN g.hybrid THEN coalesce(g.pool_tokens, g.full_tokens, g.post_tokens, g.swa_full_tokens)
        ELSE coalesce(g.pool_tokens, g.full_tokens, g.post_tokens, g.main_tokens)
    END AS tokens,
    g.context_len,
    coalesce(g.hybrid, false) AS hybrid,
    g.setup,
    g.args_cut,
    g.page_size,
    g.args_source,
    g.args_row,
    coalesce(g.engine_warned, false) AS engine_warned,
    g.start_ts,
    g.source,
    g.source_row,
    g.pool_cut,
    g.quarantined,
    -- the lines that hold the smallest and the largest of the figures that must agree
    s.lo <> s.hi AS disagrees,
    s.lo_text, s.lo_source, s.lo_row, s.hi_text, s.hi_source, s.hi_row
FROM grouped AS g
LEFT JOIN spread AS s ON s.node = g.node AND s.start_no = g.start_no
)
SELECT
    *,
    -- SGLang sizes a pool in whole pages (model_runner: tokens // page_size * page_size)
    page_size > tokens AS below_page,
    CAST(NULL AS VARCHAR) AS unproven
FROM joined
